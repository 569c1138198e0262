#ifndef EINREL_ACCUMULATE_HPP
#define EINREL_ACCUMULATE_HPP

#include <einrel_Error.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_OpSemantics.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace einrel::kernels {

// acc(i) = acc(i) ⊕ in(i): how aggregation combines partial results of one output block.
template <class Scalar, class MemorySpace>
struct AccumulateFunctor {
  Kokkos::View<Scalar*, MemorySpace> acc;
  Kokkos::View<const Scalar*, MemorySpace> in;
  AggOp agg;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent i) const { acc(i) = apply_agg(agg, acc(i), in(i)); }
};

// acc = acc ⊕ in elementwise (same bounds). Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void accumulate(const ExecutionSpace& exec, AggOp agg, const Tensor<Scalar, MemorySpace>& acc,
                const Tensor<Scalar, MemorySpace>& in) {
  if (acc.bound() != in.bound())
    throw Error("accumulate: shapes " + to_string(acc.bound()) + " and " + to_string(in.bound()) + " differ");
  Kokkos::parallel_for("einrel::accumulate[" + std::string(op_name(agg)) + "]",
                       compat::index_range(exec, Extent{0}, acc.size()),
                       AccumulateFunctor<Scalar, MemorySpace>{acc.view(), in.view(), agg});
}

}  // namespace einrel::kernels

#endif
