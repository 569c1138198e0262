#include <einrel_CublasGemm.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <einrel_Error.hpp>

#include <cublas_v2.h>

#include <limits>
#include <mutex>
#include <string>

namespace einrel::kernels::detail {

namespace {

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS: ") + call + " failed: " + cublasGetStatusString(status));
}

// One handle per process, made on first use and destroyed when Kokkos finalizes (a handle holds device
// memory, which must go before the CUDA context does). Its stream is set when it changes only: a call of
// cublasSetStream also resets the handle's workspace.
std::mutex handle_mutex;
cublasHandle_t handle = nullptr;
cudaStream_t handle_stream = nullptr;

cublasHandle_t handle_on(cudaStream_t stream) {
  const std::lock_guard<std::mutex> lock(handle_mutex);
  if (handle == nullptr) {
    check(cublasCreate(&handle), "cublasCreate");
    Kokkos::push_finalize_hook([] {
      const std::lock_guard<std::mutex> hook_lock(handle_mutex);
      cublasDestroy(handle);
      handle = nullptr;
    });
    handle_stream = nullptr;  // a new handle works on the default stream
  }
  if (stream != handle_stream) {
    check(cublasSetStream(handle, stream), "cublasSetStream");
    handle_stream = stream;
  }
  return handle;
}

int as_int(Extent e, const char* what) {
  if (e > std::numeric_limits<int>::max())
    throw Error(std::string("cuBLAS GEMM: the ") + what + " extent " + std::to_string(e) +
                " exceeds cuBLAS's int; use smaller blocks");
  return static_cast<int>(e);
}

// A row-major p x q matrix is a column-major q x p one, its transpose: row-major C = op(A) op(B) is
// column-major C^T = op(B)^T op(A)^T, which is the call made here.
// A batch of one is the plain ?gemm call, as a cuBLAS user makes it: cuBLAS chooses its kernels per entry
// point, and a strided-batched call of one matrix may get others.
template <class Scalar, class One, class Strided>
void batched(const Kokkos::Cuda& exec, bool trans_a, bool trans_b, Extent batch, Extent rows, Extent cols, Extent inner,
             const Scalar* a, const Scalar* b, Scalar* c, Scalar beta, const GemmStrides& s, One one_gemm,
             const char* one_name, Strided strided_gemm, const char* strided_name) {
  if (batch == 0 || rows == 0 || cols == 0) return;
  const int m = as_int(cols, "column"), n = as_int(rows, "row"), k = as_int(inner, "inner");
  const int count = as_int(batch, "batch");
  const int lda = as_int(s.lda, "leading"), ldb = as_int(s.ldb, "leading"), ldc = as_int(s.ldc, "leading");
  const Scalar one = 1;
  const cublasHandle_t h = handle_on(exec.cuda_stream());
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (count == 1)
    check(one_gemm(h, op_b, op_a, m, n, k, &one, b, ldb, a, lda, &beta, c, ldc), one_name);
  else
    check(strided_gemm(h, op_b, op_a, m, n, k, &one, b, ldb, static_cast<long long>(s.batch_b), a, lda,
                       static_cast<long long>(s.batch_a), &beta, c, ldc, static_cast<long long>(s.batch_c), count),
          strided_name);
}

}  // namespace

void cublas_batched_gemm(const Kokkos::Cuda& exec, bool trans_a, bool trans_b, Extent batch, Extent rows, Extent cols,
                         Extent inner, const double* a, const double* b, double* c, double beta,
                         const GemmStrides& strides) {
  batched(exec, trans_a, trans_b, batch, rows, cols, inner, a, b, c, beta, strides, cublasDgemm, "cublasDgemm",
          cublasDgemmStridedBatched, "cublasDgemmStridedBatched");
}

void cublas_batched_gemm(const Kokkos::Cuda& exec, bool trans_a, bool trans_b, Extent batch, Extent rows, Extent cols,
                         Extent inner, const float* a, const float* b, float* c, float beta,
                         const GemmStrides& strides) {
  batched(exec, trans_a, trans_b, batch, rows, cols, inner, a, b, c, beta, strides, cublasSgemm, "cublasSgemm",
          cublasSgemmStridedBatched, "cublasSgemmStridedBatched");
}

}  // namespace einrel::kernels::detail
#endif
