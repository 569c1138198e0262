#ifndef EINREL_EINSUMKERNEL_HPP
#define EINREL_EINSUMKERNEL_HPP

#include <einrel_Accumulate.hpp>
#include <einrel_BlockedGeneric.hpp>
#include <einrel_Contraction.hpp>
#include <einrel_CublasGemm.hpp>
#include <einrel_EinSum.hpp>
#include <einrel_EinsumIndexing.hpp>
#include <einrel_Error.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_OpSemantics.hpp>
#include <einrel_ResolvedEinSum.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <optional>
#include <string>
#include <type_traits>

namespace einrel::kernels {

// The generic ⊗/⊕ kernel (eindecomp.txt §3, equation 2): for an output element at (ox, oy) in X and Y,
// folds f(⊗(x, y)) (f(x) for a unary EinSum, HasY = false) with ⊕ over aggregated positions [begin, end)
// in C order. The last aggregated label is a tight inner loop; the others advance an odometer. Folds
// start from their first term, so no identity of ⊕ is needed.
template <class Scalar, class MemorySpace, bool HasY>
struct EinsumFold {
  Kokkos::View<const Scalar*, MemorySpace> x, y;
  EinsumIndexing ix;
  JoinOp join;
  AggOp agg;
  MapOp map;

  KOKKOS_INLINE_FUNCTION Scalar term(Extent ox, Extent oy) const {
    return apply_map(map, HasY ? apply_join(join, x(ox), y(oy)) : x(ox));
  }

  // Offsets in X and Y of output element i.
  KOKKOS_INLINE_FUNCTION void locate(Extent i, Extent& ox, Extent& oy) const {
    ox = 0;
    oy = 0;
    for (int l = ix.num_free - 1; l >= 0; --l) {
      const Extent c = i % ix.free_extent[l];
      i /= ix.free_extent[l];
      ox += c * ix.free_x[l];
      if (HasY) oy += c * ix.free_y[l];
    }
  }

  KOKKOS_INLINE_FUNCTION Scalar fold(Extent ox, Extent oy, Extent begin, Extent end) const {
    if (ix.num_agg == 0) return term(ox, oy);
    const int last = ix.num_agg - 1;
    Kokkos::Array<Extent, max_labels> count;
    Extent rest = begin;
    for (int l = last; l >= 0; --l) {
      count[l] = rest % ix.agg_extent[l];
      rest /= ix.agg_extent[l];
      if (l < last) {
        ox += count[l] * ix.agg_x[l];
        if (HasY) oy += count[l] * ix.agg_y[l];
      }
    }
    const Extent n = ix.agg_extent[last], sx = ix.agg_x[last], sy = HasY ? ix.agg_y[last] : 0;
    Extent t = count[last];
    Scalar acc = term(ox + t * sx, oy + t * sy);
    Extent a = begin + 1;
    ++t;
    while (a < end) {
      const Extent stop = t + (end - a) < n ? t + (end - a) : n;
      for (Extent u = t; u < stop; ++u) acc = apply_agg(agg, acc, term(ox + u * sx, oy + u * sy));
      a += stop - t;
      if (a >= end) break;
      t = 0;  // next row: advance the odometer over the other aggregated labels
      for (int l = last - 1; l >= 0; --l) {
        ox += ix.agg_x[l];
        if (HasY) oy += ix.agg_y[l];
        if (++count[l] < ix.agg_extent[l]) break;
        ox -= ix.agg_x[l] * ix.agg_extent[l];
        if (HasY) oy -= ix.agg_y[l] * ix.agg_extent[l];
        count[l] = 0;
      }
    }
    return acc;
  }
};

// One thread per output element; with accumulate, z = z ⊕ result.
template <class Scalar, class MemorySpace, bool HasY>
struct EinsumFunctor {
  EinsumFold<Scalar, MemorySpace, HasY> f;
  Kokkos::View<Scalar*, MemorySpace> z;
  bool accumulate;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent i) const {
    Extent ox, oy;
    f.locate(i, ox, oy);
    const Scalar r = f.fold(ox, oy, 0, f.ix.agg_size);
    z(i) = accumulate ? apply_agg(f.agg, z(i), r) : r;
  }
};

// Element-wise EinSums (nothing aggregated, no accumulation): one thread per piece of a row along the
// output's last label. The join and then the map each run as one tight loop over the piece, the op chosen
// once per piece (with_constant), the second loop on what the first just wrote, still in L1 — a runtime
// switch per element ran at a fifth of memory bandwidth. Z may be X itself when Z has X's labels in X's
// order (an in-place map): each element is read before it is written, at the same offset.
template <class Scalar, class MemorySpace, bool HasY>
struct EinsumRowFunctor {
  static constexpr Extent piece = 2048;
  Kokkos::View<const Scalar*, MemorySpace> x, y;
  Kokkos::View<Scalar*, MemorySpace> z;
  EinsumIndexing ix;
  JoinOp join;
  MapOp map;
  Extent pieces;  // per row

  KOKKOS_INLINE_FUNCTION void operator()(const Extent w) const {
    const int last = ix.num_free - 1;
    const Extent length = ix.free_extent[last], row = w / pieces, begin = (w % pieces) * piece;
    const Extent n = length - begin < piece ? length - begin : piece;
    Extent ox = begin * ix.free_x[last], oy = HasY ? begin * ix.free_y[last] : 0, rest = row;
    for (int l = last - 1; l >= 0; --l) {
      const Extent c = rest % ix.free_extent[l];
      rest /= ix.free_extent[l];
      ox += c * ix.free_x[l];
      if (HasY) oy += c * ix.free_y[l];
    }
    const Scalar* xs = x.data() + ox;
    Scalar* zs = z.data() + row * length + begin;
    const Extent sx = ix.free_x[last];
    if constexpr (HasY) {
      const Scalar* ys = y.data() + oy;
      const Extent sy = ix.free_y[last];
      with_constant(join, [&](auto j) {
        for (Extent t = 0; t < n; ++t) zs[t] = apply_join(decltype(j)::value, xs[t * sx], ys[t * sy]);
      });
    } else if (xs != zs || sx != 1) {
      for (Extent t = 0; t < n; ++t) zs[t] = xs[t * sx];
    }
    if (map.kind == MapKind::identity) return;
    with_constant(map.kind, [&](auto k) {
      const MapOp m{decltype(k)::value, map.constant};
      for (Extent t = 0; t < n; ++t) zs[t] = apply_map(m, zs[t]);
    });
  }
};

// Few outputs, long aggregations: every output's aggregation is cut into `chunks` ranges folded in
// parallel into `partial`, then EinsumCombineFunctor folds each output's chunks in order.
template <class Scalar, class MemorySpace, bool HasY>
struct EinsumChunkFunctor {
  EinsumFold<Scalar, MemorySpace, HasY> f;
  Kokkos::View<Scalar*, MemorySpace> partial;
  Extent chunks;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent w) const {
    const Extent i = w / chunks, c = w % chunks, n = f.ix.agg_size;
    Extent ox, oy;
    f.locate(i, ox, oy);
    partial(w) = f.fold(ox, oy, c * n / chunks, (c + 1) * n / chunks);
  }
};

template <class Scalar, class MemorySpace>
struct EinsumCombineFunctor {
  Kokkos::View<const Scalar*, MemorySpace> partial;
  Kokkos::View<Scalar*, MemorySpace> z;
  Extent chunks;
  AggOp agg;
  bool accumulate;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent i) const {
    Scalar acc = partial(i * chunks);
    for (Extent c = 1; c < chunks; ++c) acc = apply_agg(agg, acc, partial(i * chunks + c));
    z(i) = accumulate ? apply_agg(agg, z(i), acc) : acc;
  }
};

namespace detail {

// The generic kernel's two shapes besides one thread per output: element-wise rows (EinsumRowFunctor),
// and for few outputs with long aggregations the number of chunks each output's fold is cut into (1: not
// cut). einsum_scratch (einrel_KernelScratch.hpp) asks them too.
inline bool use_rows(const EinsumIndexing& ix, bool accumulate, Extent outputs) {
  return ix.num_agg == 0 && ix.num_free > 0 && !accumulate && outputs > 0;
}
inline Extent fold_chunks(Extent outputs, Extent terms, Extent threads) {
  if (outputs >= 2 * threads || terms < 1024) return 1;
  const Extent wanted = (8 * threads + outputs - 1) / outputs;
  return wanted < terms / 256 ? wanted : terms / 256;
}

template <class ExecutionSpace, class Scalar, class MemorySpace, bool HasY>
void generic_einsum(const ExecutionSpace& exec, const EinSum& e, const EinsumFold<Scalar, MemorySpace, HasY>& fold,
                    const Tensor<Scalar, MemorySpace>& z, bool accumulate) {
  const std::string label = "einrel::einsum[" + e.equation() + "]";
  const Extent outputs = z.size(), terms = fold.ix.agg_size;
  if (use_rows(fold.ix, accumulate, outputs)) {
    using Row = EinsumRowFunctor<Scalar, MemorySpace, HasY>;
    const Extent length = fold.ix.free_extent[fold.ix.num_free - 1], pieces = (length + Row::piece - 1) / Row::piece;
    Kokkos::parallel_for(label + "/rows", compat::index_range(exec, Extent{0}, outputs / length * pieces),
                         Row{fold.x, fold.y, z.view(), fold.ix, e.join, e.map, pieces});
    return;
  }
  const Extent chunks = fold_chunks(outputs, terms, exec.concurrency());
  if (chunks == 1) {
    Kokkos::parallel_for(label, compat::index_range(exec, Extent{0}, outputs),
                         EinsumFunctor<Scalar, MemorySpace, HasY>{fold, z.view(), accumulate});
    return;
  }
  const Kokkos::View<Scalar*, MemorySpace> partial =
      BlockPool<MemorySpace>::instance().template acquire<Scalar>(label + "/partial", outputs * chunks);
  Kokkos::parallel_for(label + "/chunks", compat::index_range(exec, Extent{0}, outputs * chunks),
                       EinsumChunkFunctor<Scalar, MemorySpace, HasY>{fold, partial, chunks});
  Kokkos::parallel_for(label + "/combine", compat::index_range(exec, Extent{0}, outputs),
                       EinsumCombineFunctor<Scalar, MemorySpace>{partial, z.view(), chunks, e.agg, accumulate});
}

// Worth a GEMM: something is summed, the product has matrix shape, and there is enough work.
inline bool use_gemm(const ContractionPlan& p) {
  return p.k_size > 1 && (p.m_size > 1 || p.n_size > 1) && p.batch_size * p.m_size * p.n_size * p.k_size >= 4096;
}

inline void check_arity(const EinSum& e, bool has_y) {
  if (e.arity() != (has_y ? 2u : 1u))
    throw Error("einsum '" + e.equation() + "' needs " + std::to_string(e.arity()) + " operand(s)");
}

}  // namespace detail

// Z = einsum(e, X[, Y]) on `exec`; with accumulate, Z = Z ⊕ einsum(e, X[, Y]) (the aggregation's ⊕), the
// mode partial results of one output block are combined in. Z must already have the output bound.
// Contractions with matrix shape go through batched GEMM (einrel_Contraction.hpp), other matrix-shaped
// binary EinSums through the blocked generic kernel (einrel_BlockedGeneric.hpp), everything else through
// the generic kernel below. Asynchronous on `exec`. `e` is resolved against the bounds of X and Y (throws
// Error when it was resolved against others).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void einsum(const ExecutionSpace& exec, const ResolvedEinSum& resolved, const Tensor<Scalar, MemorySpace>& x,
            const std::optional<Tensor<Scalar, MemorySpace>>& y, const Tensor<Scalar, MemorySpace>& z,
            bool accumulate = false);

// The same for an EinSum not yet resolved: resolves it against the bounds of X and Y (OperandError when
// they do not fit it).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void einsum(const ExecutionSpace& exec, const EinSum& e, const Tensor<Scalar, MemorySpace>& x,
            const std::optional<Tensor<Scalar, MemorySpace>>& y, const Tensor<Scalar, MemorySpace>& z,
            bool accumulate = false) {
  detail::check_arity(e, y.has_value());
  einsum(exec, y ? resolve(e, {x.bound(), y->bound()}) : resolve(e, {x.bound()}), x, y, z, accumulate);
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
void einsum(const ExecutionSpace& exec, const ResolvedEinSum& resolved, const Tensor<Scalar, MemorySpace>& x,
            const std::optional<Tensor<Scalar, MemorySpace>>& y, const Tensor<Scalar, MemorySpace>& z,
            bool accumulate) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "einsum needs a Kokkos execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "einsum: the execution space cannot access the tensors' memory space");
  const EinSum& e = resolved.einsum();
  detail::check_arity(e, y.has_value());
  if (resolved.operand_bounds()[0] != x.bound() || (y && resolved.operand_bounds()[1] != y->bound()))
    throw Error("einsum '" + e.equation() + "' was resolved against other bounds than its operands'");
  const EinsumIndexing ix = make_indexing(resolved);
  Extent expected = 1;
  for (int l = 0; l < ix.num_free; ++l) expected *= ix.free_extent[l];
  if (z.rank() != static_cast<int>(e.output.size()) || z.size() != expected)
    throw Error("einsum '" + e.equation() + "': output bound " + to_string(z.bound()) + " does not fit");

  if (y) {
    // (the plan of a contraction's GEMM, which the blocked generic kernel can follow too)
    const ContractionPlan plan = plan_contraction(resolved, strided_batches<ExecutionSpace>() && e.is_contraction());
    if (e.is_contraction() && detail::use_gemm(plan)) {
      contract(exec, plan, resolved, x, *y, z, accumulate,
               [](const ExecutionSpace& ex, const EinSum& sum, const Tensor<Scalar, MemorySpace>& in,
                  const Tensor<Scalar, MemorySpace>& out) {
                 einsum(ex, sum, in, std::optional<Tensor<Scalar, MemorySpace>>{}, out);
               });
      return;
    }
    // The blocked kernel is instantiated for tensors in the execution space's own memory space.
    if constexpr (std::is_same<MemorySpace, typename ExecutionSpace::memory_space>::value) {
      if (use_blocked_generic(plan)) {
        blocked_generic(exec, plan, resolved, x, *y, z, accumulate);
        return;
      }
    }
  }
  if (y)
    detail::generic_einsum(
        exec, e, EinsumFold<Scalar, MemorySpace, true>{x.view(), y->view(), ix, e.join, e.agg, e.map}, z, accumulate);
  else
    detail::generic_einsum(exec, e, EinsumFold<Scalar, MemorySpace, false>{x.view(), {}, ix, e.join, e.agg, e.map}, z,
                           accumulate);
}

}  // namespace einrel::kernels

#endif
