#ifndef EINREL_BLOCKEDGENERIC_HPP
#define EINREL_BLOCKEDGENERIC_HPP

#include <einrel_Accumulate.hpp>
#include <einrel_ContractionPlan.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_Ops.hpp>
#include <einrel_Permute.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace einrel::kernels {

// What the blocked generic kernel computes: Z[b][m][n] (⊕)= ⊕_k f(⊗(X[b][m][k], Y[b][n][k])).
template <class Scalar, class MemorySpace>
struct BlockedGenericArgs {
  Kokkos::View<const Scalar*, MemorySpace> x, y;
  Kokkos::View<Scalar*, MemorySpace> z;
  Extent batch, m, n, k;
  JoinOp join;
  AggOp agg;
  MapOp map;
  bool accumulate;
};

// Runs it on `exec`: defined in einrel_BlockedGenericLaunch.hpp and instantiated only in
// einrel_BlockedGeneric.cpp, for every enabled backend and both dtypes.
template <class ExecutionSpace, class Scalar>
void launch_blocked_generic(const ExecutionSpace& exec,
                            const BlockedGenericArgs<Scalar, typename ExecutionSpace::memory_space>& args);

// Worth the blocked kernel: no label summed in one operand only, something aggregated, enough outputs.
inline bool use_blocked_generic(const ContractionPlan& p) {
  return p.x_only.empty() && p.y_only.empty() && p.k_size > 1 && p.m_size * p.n_size >= 64 &&
         p.batch_size * p.m_size * p.n_size * p.k_size >= 4096;
}

// Z = einsum(e, X, Y) (or Z ⊕= with accumulate) for a binary EinSum `e`, resolved against the bounds of X
// and Y, whose label groups (from
// plan_contraction) satisfy use_blocked_generic: X is packed to batch+m+k and Y to batch+n+k unless
// already so, Z computed as batch+m+n and permuted into place if it is stored otherwise. Asynchronous
// on `exec`.
template <class ExecutionSpace, class Scalar>
void blocked_generic(const ExecutionSpace& exec, const ContractionPlan& p, const ResolvedEinSum& resolved,
                     const Tensor<Scalar, typename ExecutionSpace::memory_space>& x,
                     const Tensor<Scalar, typename ExecutionSpace::memory_space>& y,
                     const Tensor<Scalar, typename ExecutionSpace::memory_space>& z, bool accumulate) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using T = Tensor<Scalar, MemorySpace>;
  const EinSum& e = resolved.einsum();
  auto arranged = [&](const T& t, const std::string& stored, const std::string& wanted) {
    if (stored == wanted) return t;
    const T packed = T::uninitialized("einrel::blocked_generic/packed", resolved.extents(wanted));
    permute(exec, t, stored, packed, wanted);
    return packed;
  };
  const std::string zl = p.batch + p.m + p.n;
  const T xb = arranged(x, e.inputs[0], p.batch + p.m + p.k);
  const T yb = arranged(y, e.inputs[1], p.batch + p.n + p.k);
  const bool direct = zl == e.output;
  const T zr = direct ? z : T::uninitialized("einrel::blocked_generic/result", resolved.extents(zl));
  launch_blocked_generic(
      exec, BlockedGenericArgs<Scalar, MemorySpace>{xb.view(), yb.view(), zr.view(), p.batch_size, p.m_size, p.n_size,
                                                    p.k_size, e.join, e.agg, e.map, accumulate && direct});
  if (!direct) {
    if (accumulate && e.agg != AggOp::sum) {
      // permute's accumulation adds; other ⊕ fold through a permuted copy.
      const T permuted = T::uninitialized("einrel::blocked_generic/permuted", z.bound());
      permute(exec, zr, zl, permuted, e.output);
      Kokkos::parallel_for("einrel::blocked_generic/accumulate", compat::index_range(exec, Extent{0}, z.size()),
                           AccumulateFunctor<Scalar, MemorySpace>{z.view(), permuted.view(), e.agg});
    } else {
      permute(exec, zr, zl, z, e.output, accumulate);
    }
  }
}

}  // namespace einrel::kernels

#endif
