#ifndef EINREL_SIMDGENERICKERNEL_HPP
#define EINREL_SIMDGENERICKERNEL_HPP

// The micro-kernel and block loop of einrel_SimdGeneric.hpp, written once for any vector type (see
// einrel_SimdIsaUnit.hpp for how an ISA's translation unit includes it).

#include <einrel_OpSemantics.hpp>
#include <einrel_SimdGeneric.hpp>
#include <einrel_SimdIsaUnit.hpp>

namespace einrel::kernels::simd::detail {
namespace {

// The op pairs: first(x, y) = ⊗(x, y), the first term; step(acc, x, y) = apply_agg(agg, acc, ⊗(x, y)).
// sqdiff/sum fuses the square into the sum (one rounding fewer than the scalar form).
struct SqdiffSum {
  template <class V>
  EINREL_SIMD_TARGET static typename V::type first(typename V::type x, typename V::type y) {
    const typename V::type d = V::sub(x, y);
    return V::mul(d, d);
  }
  template <class V>
  EINREL_SIMD_TARGET static typename V::type step(typename V::type acc, typename V::type x, typename V::type y) {
    const typename V::type d = V::sub(x, y);
    return V::fmadd(d, d, acc);
  }
};

// A join or aggregation that is one vector instruction. apply_agg's max is acc < v ? v : acc = max(v, acc)
// and its min v < acc ? v : acc = min(v, acc): Fold passes the new term first, so that NaN and signed
// zeros come out as in the scalar functor.
enum class VectorOp { add, mul, max, min };

template <VectorOp op, class V>
EINREL_SIMD_TARGET typename V::type apply(typename V::type a, typename V::type b) {
  if constexpr (op == VectorOp::add)
    return V::add(a, b);
  else if constexpr (op == VectorOp::mul)
    return V::mul(a, b);
  else if constexpr (op == VectorOp::max)
    return V::max(a, b);
  else
    return V::min(a, b);
}

template <VectorOp join, VectorOp agg>
struct Fold {
  template <class V>
  EINREL_SIMD_TARGET static typename V::type first(typename V::type x, typename V::type y) {
    return apply<join, V>(x, y);
  }
  template <class V>
  EINREL_SIMD_TARGET static typename V::type step(typename V::type acc, typename V::type x, typename V::type y) {
    return apply<agg, V>(apply<join, V>(x, y), acc);
  }
};

// The k range one pass of the micro-kernels covers: the kc x nr panel of Y then stays in L1 while the
// block's m-panels stream past it (as in a GEMM's cache blocking).
constexpr Extent kc_max = 256;

// One MR x (NV vectors) tile of c over kc steps of k, its accumulators in registers: per step, NV
// vectors of Y and one broadcast X value per row. `first`: the tile starts with the first term, else it
// goes on from the partial result in c.
template <class V, class Op, int MR, int NV>
EINREL_SIMD_TARGET void micro_tile(Extent kc, const typename V::Scalar* xp, const typename V::Scalar* yp,
                                   typename V::Scalar* c, bool first) {
  using Vec = typename V::type;
  constexpr int nr = NV * V::width;
  Vec acc[MR][NV];
  Extent t = 0;
  if (first) {
    Vec y[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) y[v] = V::load(yp + v * V::width);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const Vec x = V::broadcast(xp[r]);
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] = Op::template first<V>(x, y[v]);
    }
    t = 1;
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] = V::load(c + r * block + v * V::width);
  }
  for (; t < kc; ++t) {
    Vec y[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) y[v] = V::load(yp + t * nr + v * V::width);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const Vec x = V::broadcast(xp[t * MR + r]);
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] = Op::template step<V>(acc[r][v], x, y[v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) V::store(c + r * block + v * V::width, acc[r][v]);
}

template <class V, class Op, int MR, int NV>
EINREL_SIMD_TARGET void block_of(const typename V::Scalar* xp, const typename V::Scalar* yp, Extent k, int m_panels,
                                 int n_panels, typename V::Scalar* c) {
  constexpr int nr = NV * V::width;
  for (Extent k0 = 0; k0 < k; k0 += kc_max) {
    const Extent kc = k - k0 < kc_max ? k - k0 : kc_max;
    for (int j = 0; j < n_panels; ++j)
      for (int i = 0; i < m_panels; ++i)
        micro_tile<V, Op, MR, NV>(kc, xp + (i * k + k0) * MR, yp + (j * k + k0) * nr, c + i * MR * block + j * nr,
                                  k0 == 0);
  }
}

// compute_block for one ISA's vector type V and register tile.
template <class V, int MR, int NV>
EINREL_SIMD_TARGET void compute(Pair pair, const typename V::Scalar* xp, const typename V::Scalar* yp, Extent k,
                                int m_panels, int n_panels, typename V::Scalar* c) {
  switch (pair) {
    case Pair::sqdiff_sum:
      return block_of<V, SqdiffSum, MR, NV>(xp, yp, k, m_panels, n_panels, c);
    case Pair::add_max:
      return block_of<V, Fold<VectorOp::add, VectorOp::max>, MR, NV>(xp, yp, k, m_panels, n_panels, c);
    case Pair::add_min:
      return block_of<V, Fold<VectorOp::add, VectorOp::min>, MR, NV>(xp, yp, k, m_panels, n_panels, c);
    case Pair::mul_max:
      return block_of<V, Fold<VectorOp::mul, VectorOp::max>, MR, NV>(xp, yp, k, m_panels, n_panels, c);
  }
}

}  // namespace
}  // namespace einrel::kernels::simd::detail

#endif
