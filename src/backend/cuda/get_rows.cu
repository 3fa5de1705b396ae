// CUDA get_rows (see get_rows.h).
#include "backend/cuda/get_rows.h"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/matmul.h"

namespace oxyd::backend::cuda {
namespace {

// One block row per id; threads stride over the row.
__global__ void gather_f32_kernel(const float* __restrict__ table, const int32_t* __restrict__ ids,
                                  float* __restrict__ out, int64_t dim) {
  const int64_t r = blockIdx.y;
  const float* src = table + int64_t(ids[r]) * dim;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < dim; i += int64_t(gridDim.x) * blockDim.x)
    out[r * dim + i] = src[i];
}

}  // namespace

void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out, const Stream& stream) {
  require_device(table, "get_rows", "table");
  require_device(out, "get_rows", "out");
  require_dtype(out, DType::F32, "get_rows", "out");
  if (table.dtype != DType::F32) return dequantize_rows(table, ids, num_ids, out, stream);
  const int64_t dim = table.cols();
  if (num_ids == 0 || dim == 0) return;
  for (int64_t r0 = 0; r0 < num_ids; r0 += 65535) {  // grid.y is at most 65535
    const int64_t n = std::min<int64_t>(65535, num_ids - r0);
    const dim3 grid(std::min<unsigned>(ceil_div(dim, 256), 32u), unsigned(n));
    gather_f32_kernel<<<grid, 256, 0, stream.handle()>>>(table.ptr<const float>(), ids + r0,
                                                         out.ptr<float>() + r0 * dim, dim);
    OXYD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace oxyd::backend::cuda
