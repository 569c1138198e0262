#ifndef EINREL_BLOCKEDGENERICLAUNCH_HPP
#define EINREL_BLOCKEDGENERICLAUNCH_HPP

// The blocked generic kernel's body, instantiated once per backend and dtype in einrel_BlockedGeneric.cpp
// (64 op combinations each: too many to compile in every translation unit that calls einsum).

#include <einrel_BlockedGeneric.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_OpSemantics.hpp>
#include <einrel_SimdGenericLaunch.hpp>

#include <string>
#include <type_traits>

namespace einrel::kernels {

// The generic ⊗/⊕ kernel for matrix-shaped binary EinSums (any ops): with X as [b][m][k] and Y as
// [b][n][k] (k contiguous in both), one thread computes a tile x tile block of Z[b][m][n], streaming
// the k rows of `tile` rows of X and of Y once for tile² outputs — the register blocking of a GEMM
// micro-kernel, with f(⊗) and ⊕ in place of multiply and add.
// The ops are template arguments so that the inner loop compiles to straight-line arithmetic (a runtime
// switch per element ran 30x slower than GEMM's arithmetic); only a non-identity map stays a runtime call.
template <class Scalar, class MemorySpace, JoinOp join, AggOp agg, bool HasMap>
struct BlockedGenericFunctor {
  static constexpr int tile = 4;
  Kokkos::View<const Scalar*, MemorySpace> x, y;
  Kokkos::View<Scalar*, MemorySpace> z;
  Extent m, n, k, tiles_m, tiles_n;
  MapOp map;
  bool accumulate;

  KOKKOS_INLINE_FUNCTION Scalar term(Scalar a, Scalar b) const {
    const Scalar v = apply_join(join, a, b);
    return HasMap ? apply_map(map, v) : v;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Extent w) const {
    const Extent tn = w % tiles_n, tm = (w / tiles_n) % tiles_m, b = w / (tiles_n * tiles_m);
    const Extent m0 = tm * tile, n0 = tn * tile;
    const int rows = m - m0 < tile ? static_cast<int>(m - m0) : tile;
    const int cols = n - n0 < tile ? static_cast<int>(n - n0) : tile;
    const Scalar* xs = x.data() + (b * m + m0) * k;
    const Scalar* ys = y.data() + (b * n + n0) * k;
    Scalar acc[tile][tile];
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) acc[r][c] = term(xs[r * k], ys[c * k]);
    for (Extent t = 1; t < k; ++t)
      for (int r = 0; r < rows; ++r) {
        const Scalar xv = xs[r * k + t];
        for (int c = 0; c < cols; ++c) acc[r][c] = apply_agg(agg, acc[r][c], term(xv, ys[c * k + t]));
      }
    Scalar* zs = z.data() + (b * m + m0) * n + n0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) zs[r * n + c] = accumulate ? apply_agg(agg, zs[r * n + c], acc[r][c]) : acc[r][c];
  }
};

// Calls f(join, agg, has_map) with the EinSum's ops as std::integral_constant values.
template <class F>
void dispatch_ops(JoinOp join_op, AggOp agg_op, const MapOp& map, F&& f) {
  with_constant(join_op, [&](auto join) {
    with_constant(agg_op, [&](auto agg) {
      if (map.kind == MapKind::identity)
        f(join, agg, std::false_type{});
      else
        f(join, agg, std::true_type{});
    });
  });
}

template <class ExecutionSpace, class Scalar>
void launch_blocked_generic(const ExecutionSpace& exec,
                            const BlockedGenericArgs<Scalar, typename ExecutionSpace::memory_space>& a) {
  // On the host the common op pairs take the vector kernels where the CPU has an ISA for them.
  if constexpr (Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible) {
    if (const std::optional<simd::Isa> isa = simd::best_isa(); isa && launch_simd_generic(exec, a, *isa)) return;
  }
  using Memory = typename ExecutionSpace::memory_space;
  constexpr Extent tile = 4;
  const Extent tiles_m = (a.m + tile - 1) / tile, tiles_n = (a.n + tile - 1) / tile;
  const auto policy = compat::index_range(exec, Extent{0}, a.batch * tiles_m * tiles_n);
  dispatch_ops(a.join, a.agg, a.map, [&](auto join, auto agg, auto has_map) {
    using F =
        BlockedGenericFunctor<Scalar, Memory, decltype(join)::value, decltype(agg)::value, decltype(has_map)::value>;
    static_assert(F::tile == tile, "one tile size");
    Kokkos::parallel_for("einrel::blocked_generic", policy,
                         F{a.x, a.y, a.z, a.m, a.n, a.k, tiles_m, tiles_n, a.map, a.accumulate});
  });
}

}  // namespace einrel::kernels

#endif
