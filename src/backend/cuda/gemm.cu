// cuBLAS GEMM and the batched matmul (see gemm.h).
#include "backend/cuda/gemm.h"

#include <algorithm>
#include <string>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/matmul.h"
#include "backend/cuda/qgemm.h"

#ifdef OXYD_CUDA_HAVE_CUBLAS
#include <cublas_v2.h>
#include <dlfcn.h>
#endif

namespace oxyd::backend::cuda {
namespace {

#ifdef OXYD_CUDA_HAVE_CUBLAS
#define OXYD_STR2(x) #x
#define OXYD_STR(x) OXYD_STR2(x)

// cuBLAS is loaded on first use (dlopen), not linked: a CUDA build that runs on the CPU never maps
// libcublas and libcublasLt (~600 MB of libraries; linked, they cost every start of the binary
// ~0.1 s and ~200 MB of resident memory). The calls below are the C entry points of cublas_api.h
// (cublasCreate etc. are macros for the _v2 names; cublasGemmEx also has a C++ overload taking a
// cudaDataType compute type, hence the explicit pointer type).
struct Cublas {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  const char* (*status_string)(cublasStatus_t) = nullptr;
  std::string error;  // why it is not usable; empty when it is
};

// The library of the toolkit this was built with (same major version), from the loader's search
// path, else from the toolkit's library folder at build time.
const Cublas& cublas() {
  static const Cublas api = [] {
    Cublas a;
    const std::string so = "libcublas.so." OXYD_STR(CUBLAS_VER_MAJOR);
    void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
#ifdef OXYD_CUDA_LIB_DIR
    if (!lib) lib = dlopen((std::string(OXYD_CUDA_LIB_DIR) + "/" + so).c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) {
      const char* e = dlerror();
      a.error = "cuBLAS could not be loaded (" + so + "): " + (e ? e : "unknown error");
      return a;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && a.error.empty()) a.error = "cuBLAS (" + so + ") has no " + name;
    };
    sym(a.create, "cublasCreate_v2");
    sym(a.destroy, "cublasDestroy_v2");
    sym(a.set_stream, "cublasSetStream_v2");
    sym(a.gemm_ex, "cublasGemmEx");
    sym(a.status_string, "cublasGetStatusString");
    return a;
  }();
  return api;
}

const Cublas& cublas_or_throw() {
  const Cublas& a = cublas();
  if (!a.error.empty()) throw Error(ErrorCode::UNSUPPORTED, "cuda gemm: " + a.error);
  return a;
}
#else
[[noreturn]] void no_cublas() {
  throw Error(ErrorCode::UNSUPPORTED, std::string("cuda gemm: ") + Gemm::kNotBuilt);
}
#endif

template <typename T>
__global__ void convert_kernel(const float* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = from_float<T>(x[i]);
}

#ifdef OXYD_CUDA_HAVE_CUBLAS
void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(s == CUBLAS_STATUS_ALLOC_FAILED ? ErrorCode::OUT_OF_MEMORY : ErrorCode::INTERNAL,
                std::string("cuBLAS ") + what + " failed: " + cublas().status_string(s));
}

cudaDataType cuda_type(DType t) {
  return t == DType::F16 ? CUDA_R_16F : t == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
}
#endif

}  // namespace

bool Gemm::available() { return unavailable_reason().empty(); }

std::string Gemm::unavailable_reason() {
#ifdef OXYD_CUDA_HAVE_CUBLAS
  return cublas().error;
#else
  return kNotBuilt;
#endif
}

Gemm::Gemm() {
#ifdef OXYD_CUDA_HAVE_CUBLAS
  cublasHandle_t h = nullptr;
  check_cublas(cublas_or_throw().create(&h), "cublasCreate");
  handle_ = h;
#else
  no_cublas();
#endif
}

Gemm::~Gemm() {
#ifdef OXYD_CUDA_HAVE_CUBLAS
  if (handle_) (void)cublas().destroy(static_cast<cublasHandle_t>(handle_));
#endif
}

void Gemm::gemm(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream) {
  require_device(x, "gemm", "x");
  require_device(w, "gemm", "w");
  require_device(y, "gemm", "y");
  if (x.dtype != DType::F16 && x.dtype != DType::BF16)
    throw Error(ErrorCode::UNSUPPORTED, "cuda gemm: x dtype " + std::string(dtype_traits(x.dtype).name) +
                                            " not supported (F16 or BF16)");
  require_dtype(w, x.dtype, "gemm", "w");
  if (y.dtype != DType::F32) require_dtype(y, x.dtype, "gemm", "y");
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  if (w.ndim != 2 || w.cols() != k || y.rows() != m || y.cols() != n || m > INT32_MAX ||
      n > INT32_MAX || k > INT32_MAX)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda gemm: x " + x.shape_str() + ", w " +
                                                 w.shape_str() + ", y " + y.shape_str() +
                                                 " do not make y = x·wᵀ");
  if (m == 0 || n == 0) return;
#ifdef OXYD_CUDA_HAVE_CUBLAS
  cublasHandle_t h = static_cast<cublasHandle_t>(handle_);
  check_cublas(cublas().set_stream(h, stream.handle()), "cublasSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  // A 16-bit y is computed in F32 and rounded once: with a 16-bit C, cuBLAS may split k and add
  // the partial sums in C's type (seen on the H200: BF16 outputs 10% off at m=37 n=130 k=1000).
  void* yf = y.dtype == DType::F32 ? y.data : y_ws_.get(size_t(m * n) * 4);
  // Column-major: yᵀ [n, m] = w [k, n]ᵀ · xᵀ [k, m].
  check_cublas(cublas().gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, w.data,
                            cuda_type(w.dtype), int(k), x.data, cuda_type(x.dtype), int(k), &beta,
                            yf, CUDA_R_32F, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
  if (yf != y.data) {
    dispatch_float(y.dtype, "gemm", [&](auto tag) {
      using T = decltype(tag);
      convert_kernel<T><<<ceil_div(m * n, 256), 256, 0, stream.handle()>>>(
          static_cast<const float*>(yf), y.ptr<T>(), m * n);
      OXYD_CUDA_CHECK_LAUNCH();
    });
  }
#else
  (void)stream;
  no_cublas();
#endif
}

void Gemm::gemm_f32(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream) {
  require_device(x, "gemm_f32", "x");
  require_device(w, "gemm_f32", "w");
  require_device(y, "gemm_f32", "y");
  require_dtype(x, DType::F32, "gemm_f32", "x");
  require_dtype(w, DType::F32, "gemm_f32", "w");
  require_dtype(y, DType::F32, "gemm_f32", "y");
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  if (w.ndim != 2 || w.cols() != k || y.rows() != m || y.cols() != n || m > INT32_MAX || n > INT32_MAX ||
      k > INT32_MAX)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda gemm_f32: x " + x.shape_str() + ", w " + w.shape_str() +
                                                 ", y " + y.shape_str() + " do not make y = x·wᵀ");
  if (m == 0 || n == 0) return;
#ifdef OXYD_CUDA_HAVE_CUBLAS
  cublasHandle_t h = static_cast<cublasHandle_t>(handle_);
  check_cublas(cublas().set_stream(h, stream.handle()), "cublasSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  // CUBLAS_COMPUTE_32F (not _FAST_TF32): full fp32 products, as the CPU path computes.
  check_cublas(cublas().gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, w.data, CUDA_R_32F,
                            int(k), x.data, CUDA_R_32F, int(k), &beta, y.data, CUDA_R_32F, int(n),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
#else
  (void)stream;
  no_cublas();
#endif
}

void Gemm::matmul_same_x(const Tensor& x, const MatmulOut* outs, int count, const Stream& stream) {
  const int64_t m = x.rows(), k = x.cols();
  const void* xq = nullptr;  // x quantized for the integer gemv, once
  for (int i = 0; i < count; ++i) {
    const Tensor &w = *outs[i].w, &y = *outs[i].y;
    if (w.dtype == DType::F32) {
      gemm_f32(x, w, y, stream);
    } else if (m <= kGemvMaxRows && gemv_is_integer(w.dtype)) {
      if (!xq) {
        void* q = x_ws_.get(quantized_x_bytes(m, k));
        quantize_activations(x, q, stream);
        xq = q;
      }
      gemv(x, w, y, x_ws_, stream, xq);
    } else {
      matmul(x, w, y, stream);  // m ≤ 8: the float gemv, which leaves x_ws_ alone
    }
  }
}

void Gemm::matmul(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream) {
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  if (m <= kGemvMaxRows) return gemv(x, w, y, x_ws_, stream);
  if (m <= kChunkedGemvRows && gemv_is_integer(w.dtype)) {
    // The integer gemv over chunks of 8 rows reads the weight once per chunk; dequantizing it to
    // BF16 for cuBLAS writes and rereads 2 bytes per element (~7 reads of a Q4_K weight's bytes).
    require_device(x, "matmul", "x");
    require_device(y, "matmul", "y");
    for (int64_t r0 = 0; r0 < m; r0 += kGemvMaxRows) {
      const int64_t rows = std::min(kGemvMaxRows, m - r0);
      gemv(Tensor(DType::F32, x.ptr<float>() + r0 * k, {rows, k}, Device::CUDA), w,
           Tensor(DType::F32, y.ptr<float>() + r0 * n, {rows, n}, Device::CUDA), x_ws_, stream);
    }
    return;
  }
  if (m <= kQgemmMaxRows && qgemm_supports(w.dtype) && w.ndim == 2 && w.cols() == k && y.rows() == m &&
      y.cols() == w.rows()) {
    require_device(x, "matmul", "x");
    require_device(w, "matmul", "w");
    require_device(y, "matmul", "y");
    require_dtype(x, DType::F32, "matmul", "x");
    require_dtype(y, DType::F32, "matmul", "y");
    return qgemm(x, w, y, w_ws_, stream);  // the weight decoded tile by tile on the tensor cores
  }
  require_device(x, "matmul", "x");
  require_device(w, "matmul", "w");
  require_device(y, "matmul", "y");
  require_dtype(x, DType::F32, "matmul", "x");
  require_dtype(y, DType::F32, "matmul", "y");
  if (!gemv_supports(w.dtype))
    throw Error(ErrorCode::UNSUPPORTED, "cuda matmul: weight dtype " +
                                            std::string(dtype_traits(w.dtype).name) + " not supported");
  if (w.ndim != 2 || w.cols() != k || y.rows() != m || y.cols() != n)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda matmul: x " + x.shape_str() + ", w " +
                                                 w.shape_str() + ", y " + y.shape_str() +
                                                 " do not make y = x·wᵀ");
  if (n == 0) return;
  // Activations in the weight's 16-bit type (BF16 for block formats: their range).
  const DType half = w.dtype == DType::F16 ? DType::F16 : DType::BF16;
  void* xh = x_ws_.get(size_t(m * k) * 2);
  dispatch_float(half, "matmul", [&](auto tag) {
    using T = decltype(tag);
    convert_kernel<T><<<ceil_div(m * k, 256), 256, 0, stream.handle()>>>(
        x.ptr<const float>(), static_cast<T*>(xh), m * k);
    OXYD_CUDA_CHECK_LAUNCH();
  });
  const Tensor xt(half, xh, {m, k}, Device::CUDA);
  if (w.dtype == DType::F16 || w.dtype == DType::BF16) return gemm(xt, w, y, stream);
  // Block formats: dequantize `chunk` rows of w at a time, each chunk a column slice of y.
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(n, int64_t(chunk_bytes_) / (k * 2)));
  void* wh = w_ws_.get(size_t(chunk * k) * 2);
  for (int64_t n0 = 0; n0 < n; n0 += chunk) {
    const int64_t nc = std::min(chunk, n - n0);
    Tensor wc = w;
    wc.data = w.row<uint8_t>(n0);
    wc.shape[0] = nc;
    const Tensor wd(DType::BF16, wh, {nc, k}, Device::CUDA);
    dequantize(wc, wd, stream);
#ifdef OXYD_CUDA_HAVE_CUBLAS
    // y[:, n0:n0+nc] is the column-major [nc, m] block at y + n0 with leading dimension n.
    cublasHandle_t h = static_cast<cublasHandle_t>(handle_);
    check_cublas(cublas().set_stream(h, stream.handle()), "cublasSetStream");
    const float alpha = 1.0f, beta = 0.0f;
    check_cublas(cublas().gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, int(nc), int(m), int(k), &alpha, wh,
                              CUDA_R_16BF, int(k), xh, CUDA_R_16BF, int(k), &beta,
                              y.ptr<float>() + n0, CUDA_R_32F, int(n), CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
#else
    no_cublas();
#endif
  }
}

}  // namespace oxyd::backend::cuda
