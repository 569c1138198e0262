#ifndef EINREL_CONTRACTION_HPP
#define EINREL_CONTRACTION_HPP

#include <einrel_ContractionPlan.hpp>
#include <einrel_CublasGemm.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_KokkosKernelsCompat.hpp>
#include <einrel_Permute.hpp>
#include <einrel_Tensor.hpp>

#include <KokkosBatched_Gemm_Decl.hpp>
#include <KokkosBatched_Gemm_Serial_Impl.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>

namespace einrel::kernels {

// One row-major GEMM per batch index with KokkosBatched::SerialGemm: for many small matrices, where
// one thread per matrix beats a parallel GEMM per matrix.
template <class Scalar, class MemorySpace, class TransA, class TransB>
struct BatchedGemmFunctor {
  Kokkos::View<const Scalar*, MemorySpace> a, b;
  Kokkos::View<Scalar*, MemorySpace> c;
  Extent rows, cols, inner;  // C_b is rows x cols, op(A_b) rows x inner, op(B_b) inner x cols
  Scalar beta;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent batch) const {
    using In = Kokkos::View<const Scalar**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using Out = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    constexpr bool ta = std::is_same<TransA, KokkosBatched::Trans::Transpose>::value;
    constexpr bool tb = std::is_same<TransB, KokkosBatched::Trans::Transpose>::value;
    const In A(a.data() + batch * rows * inner, ta ? inner : rows, ta ? rows : inner);
    const In B(b.data() + batch * inner * cols, tb ? cols : inner, tb ? inner : cols);
    const Out C(c.data() + batch * rows * cols, rows, cols);
    KokkosBatched::SerialGemm<TransA, TransB, KokkosBatched::Algo::Gemm::Unblocked>::invoke(Scalar(1), A, B, beta, C);
  }
};

namespace detail {

// Whether a batch of GEMMs runs one thread per matrix (KokkosBatched::SerialGemm) rather than one vendor GEMM
// per matrix.
inline bool many_small_gemms(Extent batch, Extent rows, Extent cols, Extent inner, Extent threads) {
  const Extent flops = rows * cols * inner;
  return batch > 1 && (flops < 48 * 48 * 48 || (batch >= 4 * threads && flops < 128 * 128 * 128));
}

// Row-major, batched: C_b = op(A_b) op(B_b) + beta C_b for b < batch, the matrices where `strides` says
// (packed_strides unless strided_batches<ExecutionSpace>()).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void batched_gemm(const ExecutionSpace& exec, bool trans_a, bool trans_b, Extent batch, Extent rows, Extent cols,
                  Extent inner, const Scalar* a, const Scalar* b, Scalar* c, Scalar beta, const GemmStrides& strides) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (strided_batches<ExecutionSpace>()) {
    cublas_batched_gemm(exec, trans_a, trans_b, batch, rows, cols, inner, a, b, c, beta, strides);
    return;
  }
#endif
  if (!(strides == packed_strides(trans_a, trans_b, rows, cols, inner)))
    throw Error("batched_gemm: this execution space takes only matrices stored one after the other");
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  if (many_small_gemms(batch, rows, cols, inner, exec.concurrency())) {
    using Flat = Kokkos::View<const Scalar*, MemorySpace, Unmanaged>;
    const Flat av(a, batch * rows * inner), bv(b, batch * inner * cols);
    const Kokkos::View<Scalar*, MemorySpace, Unmanaged> cv(c, batch * rows * cols);
    using Policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Extent>>;
    using N = KokkosBatched::Trans::NoTranspose;
    using T = KokkosBatched::Trans::Transpose;
    const Policy policy(exec, 0, batch);
    const char* label = "einrel::batched_gemm";
    if (!trans_a && !trans_b)
      Kokkos::parallel_for(label, policy,
                           BatchedGemmFunctor<Scalar, MemorySpace, N, N>{av, bv, cv, rows, cols, inner, beta});
    else if (!trans_a)
      Kokkos::parallel_for(label, policy,
                           BatchedGemmFunctor<Scalar, MemorySpace, N, T>{av, bv, cv, rows, cols, inner, beta});
    else if (!trans_b)
      Kokkos::parallel_for(label, policy,
                           BatchedGemmFunctor<Scalar, MemorySpace, T, N>{av, bv, cv, rows, cols, inner, beta});
    else
      Kokkos::parallel_for(label, policy,
                           BatchedGemmFunctor<Scalar, MemorySpace, T, T>{av, bv, cv, rows, cols, inner, beta});
    return;
  }
  // A row-major p x q matrix is a column-major q x p one, its transpose: row-major C = op(A) op(B) is
  // column-major C^T = op(B)^T op(A)^T, which is what the vendor GEMM computes here.
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace, Unmanaged>;
  using ConstMatrix = Kokkos::View<const Scalar**, Kokkos::LayoutLeft, MemorySpace, Unmanaged>;
  for (Extent k = 0; k < batch; ++k) {
    const ConstMatrix A(a + k * rows * inner, trans_a ? rows : inner, trans_a ? inner : rows);
    const ConstMatrix B(b + k * inner * cols, trans_b ? inner : cols, trans_b ? cols : inner);
    const Matrix C(c + k * rows * cols, cols, rows);
    compat::gemm(exec, trans_b ? "T" : "N", trans_a ? "T" : "N", Scalar(1), B, A, beta, C);
  }
}

}  // namespace detail

// Touches the vendor GEMM's own workspace before a timed run: OpenBLAS packs operand panels into per-thread
// buffers that it maps on first use and keeps, so their pages are first-touched inside the first GEMM of a
// process (~12 µs per 4 KiB page on this project's VMs: a first 1024³ dgemm takes 56 ms, later ones 23 ms).
// One GEMM shaped like `call` but with at most 512 columns per thread and an inner extent of at most 2 KiB
// of scalars touches what the full call touches (OpenBLAS' packed panel of the row-major left operand
// grows with the rows; the other panel holds up to 512 columns per thread and one 256-deep slice of the
// inner dimension in f64, 384 in f32), at a fraction of its flops. It runs on memory the caller has
// touched already (the call's own blocks): `a` holds at least rows·inner scalars, `b` inner·cols, `c`
// rows·cols; their values do not matter and `c`'s are overwritten. Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void warm_vendor_gemm(const ExecutionSpace& exec, const GemmCall& call, const Scalar* a, const Scalar* b, Scalar* c) {
  const Extent cols = std::min<Extent>(call.cols, 512 * exec.concurrency());
  const Extent inner = std::min<Extent>(call.inner, 2048 / sizeof(Scalar));
  detail::batched_gemm<ExecutionSpace, Scalar, MemorySpace>(exec, false, false, 1, call.rows, cols, inner, a, b, c,
                                                            Scalar(0),
                                                            packed_strides(false, false, call.rows, cols, inner));
}

// Z = X·Y (or Z += X·Y with accumulate) for a binary contraction `e`, resolved against the bounds of X
// and Y and planned by plan_contraction:
// single-operand labels are summed away with `reduce`, operands packed where the plan says, then one
// batched GEMM, writing straight into Z unless Z itself needs packing. `reduce(exec, equation, in, out)`
// is the generic kernel for a unary sum. Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace, class Reduce>
void contract(const ExecutionSpace& exec, const ContractionPlan& p, const ResolvedEinSum& resolved,
              const Tensor<Scalar, MemorySpace>& x, const Tensor<Scalar, MemorySpace>& y,
              const Tensor<Scalar, MemorySpace>& z, bool accumulate, Reduce&& reduce) {
  using T = Tensor<Scalar, MemorySpace>;
  const EinSum& e = resolved.einsum();
  auto prepare = [&](const T& t, const std::string& stored, const std::string& kept, const std::string& gemm) {
    T r = t;
    if (kept != stored) {  // sum the labels only this operand has
      const T reduced = T::uninitialized("einrel::contract/reduced", resolved.extents(kept));
      reduce(exec, EinSum::parse(stored + "->" + kept, 1), r, reduced);
      r = reduced;
    }
    if (gemm != kept) {
      const T packed = T::uninitialized("einrel::contract/packed", resolved.extents(gemm));
      permute(exec, r, kept, packed, gemm);
      r = packed;
    }
    return r;
  };
  const T xg = prepare(x, e.inputs[0], p.x_labels, p.x_gemm);
  const T yg = prepare(y, e.inputs[1], p.y_labels, p.y_gemm);
  const T zg = p.pack_z ? T::uninitialized("einrel::contract/result", resolved.extents(p.z_gemm)) : z;
  const Scalar beta = accumulate && !p.pack_z ? Scalar(1) : Scalar(0);
  if (!p.z_transposed)
    detail::batched_gemm<ExecutionSpace, Scalar, MemorySpace>(
        exec, p.trans_x, p.trans_y, p.batch_size, p.m_size, p.n_size, p.k_size, xg.view().data(), yg.view().data(),
        zg.view().data(), beta, {p.x_ld, p.y_ld, p.z_ld, p.x_batch_stride, p.y_batch_stride, p.z_batch_stride});
  else  // Z_b^T = Y_b^T X_b^T: Y is read as [n][k] when stored [n][k], X as [k][m] when stored [k][m]
    detail::batched_gemm<ExecutionSpace, Scalar, MemorySpace>(
        exec, !p.trans_y, !p.trans_x, p.batch_size, p.n_size, p.m_size, p.k_size, yg.view().data(), xg.view().data(),
        zg.view().data(), beta, {p.y_ld, p.x_ld, p.z_ld, p.y_batch_stride, p.x_batch_stride, p.z_batch_stride});
  if (p.pack_z) permute(exec, zg, p.z_gemm, z, e.output, accumulate);
}

}  // namespace einrel::kernels

#endif
