// get_rows: gather rows of an embedding table of any weight format into f32 rows, split over
// the thread pool when there are many ids. Row decoding uses the portable decoders.
#include "backend/cpu/matmul.h"

#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/matmul/decode.h"
#include "backend/cpu/matmul/pack.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {

void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out) {
  const int64_t dim = table.cols(), num_rows = table.rows();
  OXYD_CHECK(out.dtype == DType::F32 && out.cols() == dim && out.rows() == num_ids,
             "get_rows: out must be F32 [num_ids, dim]");
  OXYD_CHECK(decodable(table.dtype), "get_rows: unsupported table dtype");
  for (int64_t i = 0; i < num_ids; ++i)
    OXYD_CHECK(ids[i] >= 0 && ids[i] < num_rows, "get_rows: id out of range");
  const int64_t row_bytes = table.row_bytes();
  const uint8_t* base = static_cast<const uint8_t*>(table.data);
  float* dst = out.ptr<float>();
  // A packed table (matmul/pack.h) is read from its packed copy: the original rows may have been
  // released at load. Each row is put back into its block layout, then decoded as usual.
  const PreparedWeight* prep = cpu_backend().prepared(table);
  const bool packed = prep && packable(table.dtype) && prep->layout != 0;
  parallel_for(num_ids, std::max<int64_t>(1, 16384 / std::max<int64_t>(dim, 1)), [&](int64_t b, int64_t e) {
    std::vector<uint8_t> row(packed ? size_t(row_bytes) : 0);
    for (int64_t i = b; i < e; ++i) {
      const uint8_t* src = base + ids[i] * row_bytes;
      if (packed) {
        matmul_unpack_row(table.dtype, PackLayout(prep->layout), prep->bytes, dim, ids[i], row.data());
        src = row.data();
      }
      decode_row(table.dtype, src, dst + i * dim, dim);
    }
  });
}

}  // namespace oxyd::backend::cpu
