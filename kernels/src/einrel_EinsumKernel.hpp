#ifndef EINREL_EINSUMKERNEL_HPP
#define EINREL_EINSUMKERNEL_HPP

#include <einrel_EinSum.hpp>
#include <einrel_EinsumIndexing.hpp>
#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <optional>
#include <string>

namespace einrel::kernels {

// One thread per output element: locate its X and Y elements from the output coordinates, then walk
// the aggregated labels with an odometer, folding f(⊗(x, y)) (or f(x) for a unary EinSum, HasY = false)
// with ⊕ (eindecomp.txt §3, equation 2). Aggregations start from the first term, so no identity of ⊕ is
// needed and every output has at least one term (extents are positive).
template <class Scalar, class MemorySpace, bool HasY>
struct EinsumFunctor {
  Kokkos::View<const Scalar*, MemorySpace> x, y;
  Kokkos::View<Scalar*, MemorySpace> z;
  EinsumIndexing ix;
  JoinOp join;
  AggOp agg;
  MapOp map;

  KOKKOS_INLINE_FUNCTION Scalar term(Extent ox, Extent oy) const {
    return apply_map(map, HasY ? apply_join(join, x(ox), y(oy)) : x(ox));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Extent i) const {
    Extent ox = 0, oy = 0, rest = i;
    for (int l = ix.num_free - 1; l >= 0; --l) {
      const Extent c = rest % ix.free_extent[l];
      rest /= ix.free_extent[l];
      ox += c * ix.free_x[l];
      if (HasY) oy += c * ix.free_y[l];
    }
    Kokkos::Array<Extent, max_labels> count;
    for (int l = 0; l < ix.num_agg; ++l) count[l] = 0;
    Scalar acc = term(ox, oy);
    for (Extent a = 1; a < ix.agg_size; ++a) {
      // advance the odometer over the aggregated labels, last label fastest
      for (int l = ix.num_agg - 1; l >= 0; --l) {
        ox += ix.agg_x[l];
        if (HasY) oy += ix.agg_y[l];
        if (++count[l] < ix.agg_extent[l]) break;
        ox -= ix.agg_x[l] * ix.agg_extent[l];
        if (HasY) oy -= ix.agg_y[l] * ix.agg_extent[l];
        count[l] = 0;
      }
      acc = apply_agg(agg, acc, term(ox, oy));
    }
    z(i) = acc;
  }
};

// acc(i) = acc(i) ⊕ in(i): how aggregation combines partial results of one output block.
template <class Scalar, class MemorySpace>
struct AccumulateFunctor {
  Kokkos::View<Scalar*, MemorySpace> acc;
  Kokkos::View<const Scalar*, MemorySpace> in;
  AggOp agg;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent i) const { acc(i) = apply_agg(agg, acc(i), in(i)); }
};

// Z = einsum(e, X[, Y]) on `exec`. Z must already have the output bound. Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void einsum(const ExecutionSpace& exec, const EinSum& e, const Tensor<Scalar, MemorySpace>& x,
            const std::optional<Tensor<Scalar, MemorySpace>>& y, const Tensor<Scalar, MemorySpace>& z) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "einsum needs a Kokkos execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "einsum: the execution space cannot access the tensors' memory space");
  if (e.arity() != (y ? 2u : 1u))
    throw Error("einsum '" + e.equation() + "' needs " + std::to_string(e.arity()) + " operand(s)");
  const Bound y_bound = y ? y->bound() : Bound{};
  const EinsumIndexing ix = make_indexing(e, x.bound(), y_bound);
  Extent expected = 1;
  for (int l = 0; l < ix.num_free; ++l) expected *= ix.free_extent[l];
  if (z.rank() != static_cast<int>(e.output.size()) || z.size() != expected)
    throw Error("einsum '" + e.equation() + "': output bound " + to_string(z.bound()) + " does not fit");

  using Policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Extent>>;
  const std::string label = "einrel::einsum[" + e.equation() + "]";
  if (y) {
    Kokkos::parallel_for(
        label, Policy(exec, 0, z.size()),
        EinsumFunctor<Scalar, MemorySpace, true>{x.view(), y->view(), z.view(), ix, e.join, e.agg, e.map});
  } else {
    Kokkos::parallel_for(label, Policy(exec, 0, z.size()),
                         EinsumFunctor<Scalar, MemorySpace, false>{x.view(), {}, z.view(), ix, e.join, e.agg, e.map});
  }
}

// acc = acc ⊕ in elementwise (same bounds). Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void accumulate(const ExecutionSpace& exec, AggOp agg, const Tensor<Scalar, MemorySpace>& acc,
                const Tensor<Scalar, MemorySpace>& in) {
  if (acc.bound() != in.bound())
    throw Error("accumulate: shapes " + to_string(acc.bound()) + " and " + to_string(in.bound()) + " differ");
  Kokkos::parallel_for("einrel::accumulate[" + std::string(op_name(agg)) + "]",
                       Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Extent>>(exec, 0, acc.size()),
                       AccumulateFunctor<Scalar, MemorySpace>{acc.view(), in.view(), agg});
}

}  // namespace einrel::kernels

#endif
