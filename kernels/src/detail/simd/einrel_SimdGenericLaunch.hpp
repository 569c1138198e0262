#ifndef EINREL_SIMDGENERICLAUNCH_HPP
#define EINREL_SIMDGENERICLAUNCH_HPP

// The generic ⊗/⊕ kernel's vector path on host execution spaces: X and Y packed into the panels the
// micro-kernels of einrel_SimdGeneric.hpp read, blocks of Z computed in parallel on the execution space.

#include <einrel_BlockedGeneric.hpp>
#include <einrel_OpSemantics.hpp>
#include <einrel_SimdGeneric.hpp>

#include <Kokkos_Core.hpp>

#include <optional>

namespace einrel::kernels {

// The vector kernel for these ops, if there is one (identity map only).
inline std::optional<simd::Pair> simd_pair(JoinOp join, AggOp agg, const MapOp& map) {
  if (map.kind != MapKind::identity) return std::nullopt;
  if (join == JoinOp::sqdiff && agg == AggOp::sum) return simd::Pair::sqdiff_sum;
  if (join == JoinOp::add && agg == AggOp::max) return simd::Pair::add_max;
  if (join == JoinOp::add && agg == AggOp::min) return simd::Pair::add_min;
  if (join == JoinOp::mul && agg == AggOp::max) return simd::Pair::mul_max;
  return std::nullopt;
}

// The elements of the X and Y panels the vector path packs a [batch][m][k] by [batch][n][k] problem into
// with `isa`'s register tile.
struct PanelElements {
  Extent x, y;
};
template <class Scalar>
PanelElements panel_elements(simd::Isa isa, Extent batch, Extent m, Extent n, Extent k) {
  const simd::PanelShape shape = simd::panel_shape<Scalar>(isa);
  return {batch * ((m + shape.mr - 1) / shape.mr) * shape.mr * k,
          batch * ((n + shape.nr - 1) / shape.nr) * shape.nr * k};
}

// dst[b][p][t][r] = src[b][p * width + r][t]: an operand stored [batch][rows][k] as panels of `width`
// rows, each [k][width], rows past the end zero. One panel per work item.
template <class Scalar, class MemorySpace>
struct PackPanelsFunctor {
  Kokkos::View<const Scalar*, MemorySpace> src;
  Kokkos::View<Scalar*, MemorySpace> dst;
  Extent rows, k, panels;
  int width;

  void operator()(const Extent w) const {
    const Extent b = w / panels, r0 = (w % panels) * width;
    const int valid = rows - r0 < width ? static_cast<int>(rows - r0) : width;
    const Scalar* s = src.data() + (b * rows + r0) * k;
    Scalar* d = dst.data() + w * k * width;
    for (Extent t = 0; t < k; ++t) {
      for (int r = 0; r < valid; ++r) d[t * width + r] = s[r * k + t];
      for (int r = valid; r < width; ++r) d[t * width + r] = Scalar(0);
    }
  }
};

// One simd::block x simd::block block of Z[b] per work item: the micro-kernels fill a buffer on the
// stack, which then lands in Z (⊕ into it with accumulate).
template <class Scalar, class MemorySpace>
struct SimdGenericFunctor {
  Kokkos::View<const Scalar*, MemorySpace> xp, yp;  // packed panels
  Kokkos::View<Scalar*, MemorySpace> z;
  Extent m, n, k, m_panels, n_panels, blocks_m, blocks_n;
  simd::Isa isa;
  simd::Pair pair;
  simd::PanelShape shape;
  AggOp agg;
  bool accumulate;

  void operator()(const Extent w) const {
    const Extent bn = w % blocks_n, bm = (w / blocks_n) % blocks_m, b = w / (blocks_n * blocks_m);
    const Extent m0 = bm * simd::block, n0 = bn * simd::block;
    const int rows = m - m0 < simd::block ? static_cast<int>(m - m0) : simd::block;
    const int cols = n - n0 < simd::block ? static_cast<int>(n - n0) : simd::block;
    alignas(64) Scalar c[simd::block * simd::block];
    simd::compute_block(isa, pair, xp.data() + (b * m_panels + m0 / shape.mr) * k * shape.mr,
                        yp.data() + (b * n_panels + n0 / shape.nr) * k * shape.nr, k, (rows + shape.mr - 1) / shape.mr,
                        (cols + shape.nr - 1) / shape.nr, c);
    Scalar* zs = z.data() + (b * m + m0) * n + n0;
    for (int r = 0; r < rows; ++r)
      for (int q = 0; q < cols; ++q) {
        const Scalar v = c[r * simd::block + q];
        zs[r * n + q] = accumulate ? apply_agg(agg, zs[r * n + q], v) : v;
      }
  }
};

// Runs what BlockedGenericArgs describes with `isa`'s micro-kernels, if they cover its ops (else returns
// false and does nothing). For host execution spaces; needs k >= 1.
template <class ExecutionSpace, class Scalar>
bool launch_simd_generic(const ExecutionSpace& exec,
                         const BlockedGenericArgs<Scalar, typename ExecutionSpace::memory_space>& a, simd::Isa isa) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "the vector kernels run on the host");
  using Memory = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Extent>>;
  const std::optional<simd::Pair> pair = simd_pair(a.join, a.agg, a.map);
  if (!pair) return false;
  const simd::PanelShape shape = simd::panel_shape<Scalar>(isa);
  const Extent m_panels = (a.m + shape.mr - 1) / shape.mr, n_panels = (a.n + shape.nr - 1) / shape.nr;
  using T = Tensor<Scalar, Memory>;
  const PanelElements panels = panel_elements<Scalar>(isa, a.batch, a.m, a.n, a.k);
  const T xp = T::uninitialized("einrel::simd_generic/x_panels", {panels.x});
  const T yp = T::uninitialized("einrel::simd_generic/y_panels", {panels.y});
  Kokkos::parallel_for("einrel::simd_generic/pack_x", Policy(exec, 0, a.batch * m_panels),
                       PackPanelsFunctor<Scalar, Memory>{a.x, xp.view(), a.m, a.k, m_panels, shape.mr});
  Kokkos::parallel_for("einrel::simd_generic/pack_y", Policy(exec, 0, a.batch * n_panels),
                       PackPanelsFunctor<Scalar, Memory>{a.y, yp.view(), a.n, a.k, n_panels, shape.nr});
  const Extent blocks_m = (a.m + simd::block - 1) / simd::block, blocks_n = (a.n + simd::block - 1) / simd::block;
  Kokkos::parallel_for(std::string("einrel::simd_generic[") + simd::isa_name(isa) + "]",
                       Policy(exec, 0, a.batch * blocks_m * blocks_n),
                       SimdGenericFunctor<Scalar, Memory>{xp.view(), yp.view(), a.z, a.m, a.n, a.k, m_panels, n_panels,
                                                          blocks_m, blocks_n, isa, *pair, shape, a.agg, a.accumulate});
  return true;
}

}  // namespace einrel::kernels

#endif
