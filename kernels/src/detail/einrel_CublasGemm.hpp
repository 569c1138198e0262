#ifndef EINREL_CUBLASGEMM_HPP
#define EINREL_CUBLASGEMM_HPP

// Row-major batched GEMM through cuBLAS, for the Cuda backend: one strided-batched call on the execution
// space instance's stream, where Kokkos Kernels 3.4 would launch and fence one GEMM per matrix and run many
// small matrices one thread each.

#include <einrel_ContractionPlan.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace einrel::kernels {

// Whether detail::batched_gemm on `ExecutionSpace` takes any GemmStrides (a vendor call with leading
// dimensions and batch strides: cuBLAS's strided-batched GEMM) rather than only packed_strides.
template <class ExecutionSpace>
constexpr bool strided_batches() {
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same_v<ExecutionSpace, Kokkos::Cuda>;
#else
  return false;
#endif
}

}  // namespace einrel::kernels

#ifdef KOKKOS_ENABLE_CUDA
namespace einrel::kernels::detail {

// C_b = op(A_b) op(B_b) + beta C_b for b < batch (row-major matrices where `strides` says; C_b is rows x
// cols, op(A_b) rows x inner), ordered on exec's stream. Throws einrel::Error when cuBLAS fails or an extent
// exceeds cuBLAS's int.
void cublas_batched_gemm(const Kokkos::Cuda& exec, bool trans_a, bool trans_b, Extent batch, Extent rows, Extent cols,
                         Extent inner, const double* a, const double* b, double* c, double beta,
                         const GemmStrides& strides);
void cublas_batched_gemm(const Kokkos::Cuda& exec, bool trans_a, bool trans_b, Extent batch, Extent rows, Extent cols,
                         Extent inner, const float* a, const float* b, float* c, float beta,
                         const GemmStrides& strides);

}  // namespace einrel::kernels::detail
#endif

#endif
