#ifndef EINREL_PERMUTE_HPP
#define EINREL_PERMUTE_HPP

#include <einrel_Error.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_SimdTranspose.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace einrel::kernels {

// How a permutation walks its tensors, as plain data: the dimension contiguous in the input (a), the
// one contiguous in the output (b), and every other dimension as an outer index.
struct PermuteGeometry {
  int num_outer = 0;
  Kokkos::Array<Extent, max_rank> outer_extent, outer_in, outer_out;  // extents and strides
  Extent extent_a = 1, extent_b = 1;
  Extent in_stride_b = 0, out_stride_a = 1;                 // the non-unit strides of b in the input, a in the output
  bool same = true;                                         // a == b: contiguous rows on both sides
  Extent tile_a = 1, tile_b = 1, tiles_a = 1, tiles_b = 1;  // tile_a x tile_b squares of (a, b)

  // Work item w: its tile's corner (a0, b0) and the offsets of its outer indices in the input and output.
  KOKKOS_INLINE_FUNCTION void locate(Extent w, Extent& a0, Extent& b0, Extent& oi, Extent& oo) const {
    a0 = w % tiles_a * tile_a;
    w /= tiles_a;
    b0 = w % tiles_b * tile_b;
    w /= tiles_b;
    oi = oo = 0;
    for (int k = num_outer - 1; k >= 0; --k) {
      const Extent c = w % outer_extent[k];
      w /= outer_extent[k];
      oi += c * outer_in[k];
      oo += c * outer_out[k];
    }
  }
};

// Cache-blocked: when a != b one thread copies a tile x tile square of (a, b), writing rows along b (the
// inner loop) and reading columns along a, so both sides use whole cache lines while the square stays
// in L1 (32 x 32 and this loop order measured fastest on the development machine: perf_tests); when
// a == b one thread copies one row.
template <class Scalar, class MemorySpace, bool Add>
struct PermuteFunctor {
  static constexpr Extent tile = 32;
  Kokkos::View<const Scalar*, MemorySpace> in;
  Kokkos::View<Scalar*, MemorySpace> out;
  PermuteGeometry g;

  KOKKOS_INLINE_FUNCTION void put(Extent dst, Extent src) const {
    if (Add)
      out(dst) += in(src);
    else
      out(dst) = in(src);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Extent w) const {
    Extent a0, b0, oi, oo;
    g.locate(w, a0, b0, oi, oo);
    if (g.same) {
      for (Extent x = 0; x < g.extent_a; ++x) put(oo + x, oi + x);
      return;
    }
    if (a0 + tile <= g.extent_a && b0 + tile <= g.extent_b) {  // a whole tile: constant trip counts
      for (Extent x = a0; x < a0 + tile; ++x)
        for (Extent y = b0; y < b0 + tile; ++y) put(oo + y + x * g.out_stride_a, oi + x + y * g.in_stride_b);
      return;
    }
    const Extent a1 = a0 + tile < g.extent_a ? a0 + tile : g.extent_a;
    const Extent b1 = b0 + tile < g.extent_b ? b0 + tile : g.extent_b;
    for (Extent x = a0; x < a1; ++x)
      for (Extent y = b0; y < b1; ++y) put(oo + y + x * g.out_stride_a, oi + x + y * g.in_stride_b);
  }
};

// The transposing case (a != b) on the host: one tile_a x tile_b rectangle of (a, b) per work item,
// transposed in vector registers (einrel_SimdTranspose.hpp). Output rows of 256 elements measured faster
// than 64 (long runs of whole lines for the streaming stores), 64 rows faster than 32 or 16.
template <class Scalar, class MemorySpace>
struct VectorTransposeFunctor {
  static constexpr Extent tile_a = 64, tile_b = 256;
  Kokkos::View<const Scalar*, MemorySpace> in;
  Kokkos::View<Scalar*, MemorySpace> out;
  PermuteGeometry g;
  simd::Isa isa;
  bool add, stream;

  void operator()(const Extent w) const {
    Extent a0, b0, oi, oo;
    g.locate(w, a0, b0, oi, oo);
    const int na = static_cast<int>(g.extent_a - a0 < tile_a ? g.extent_a - a0 : tile_a);
    const int nb = static_cast<int>(g.extent_b - b0 < tile_b ? g.extent_b - b0 : tile_b);
    simd::transpose_tile(isa, in.data() + oi + a0 + b0 * g.in_stride_b, g.in_stride_b,
                         out.data() + oo + b0 + a0 * g.out_stride_a, g.out_stride_a, na, nb, add, stream);
  }
};

// The transposing case (a != b) on a device: one team of 32 x 8 threads per tile of 32 (a) x 32 (b) of one
// outer index, staged through a padded tile in team scratch (shared) memory, so that a warp reads 32
// consecutive elements along a and writes 32 consecutive elements along b (the one-thread-per-tile
// PermuteFunctor reads and writes 32 strided lines per warp access there).
template <class ExecutionSpace, class Scalar, class MemorySpace, bool Add>
struct TeamTransposeFunctor {
  static constexpr int tile = 32, rows = 8, team_size = tile * rows;
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  // Row-major, so that the padding separates rows: a scratch view defaults to the space's layout, which on
  // Cuda is LayoutLeft, and would put a warp's 32 writes of one row in one bank.
  using Tile = Kokkos::View<Scalar[tile][tile + 1], Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const Scalar*, MemorySpace> in;
  Kokkos::View<Scalar*, MemorySpace> out;
  PermuteGeometry g;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    Extent a0, b0, oi, oo;
    g.locate(team.league_rank(), a0, b0, oi, oo);
    const Tile t(team.team_scratch(0));
    const int lane = team.team_rank() % tile, row = team.team_rank() / tile;
    const int na = static_cast<int>(g.extent_a - a0 < tile ? g.extent_a - a0 : tile);
    const int nb = static_cast<int>(g.extent_b - b0 < tile ? g.extent_b - b0 : tile);
    for (int y = row; y < nb; y += rows)  // t(y, x): element (a0 + x, b0 + y), read along a
      if (lane < na) t(y, lane) = in(oi + a0 + lane + (b0 + y) * g.in_stride_b);
    team.team_barrier();
    for (int x = row; x < na; x += rows) {  // written along b
      if (lane >= nb) continue;
      Scalar& o = out(oo + b0 + lane + (a0 + x) * g.out_stride_a);
      if (Add)
        o += t(lane, x);
      else
        o = t(lane, x);
    }
  }
};

// The non-transposing case (a == b) on a device: a row of extent_a contiguous elements is copied by
// extent_a / Vec consecutive threads, thread t taking elements t, t + extent_a / Vec, ... (Vec divides the
// row length), so that each of a warp's Vec accesses reads and writes consecutive elements while every
// thread decodes its row's outer indices once for Vec elements. (Vec consecutive elements per thread, as
// before, measured 1.4 TB/s on a 2M-element "jil->ijl" on an H200: each access of a warp spanned Vec times
// the lines it used.) Index is int where the tensor has fewer than 2^31 elements: a GPU's 64-bit division
// costs several times its 32-bit one.
template <class Scalar, class MemorySpace, bool Add, class Index, int Vec>
struct ElementPermuteFunctor {
  Kokkos::View<const Scalar*, MemorySpace> in;
  Kokkos::View<Scalar*, MemorySpace> out;
  PermuteGeometry g;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent i) const {
    const Index per_row = static_cast<Index>(g.extent_a) / Vec;
    Index w = static_cast<Index>(i);
    const Index t = w % per_row;
    w /= per_row;
    Extent oi = t, oo = t;
    for (int k = g.num_outer - 1; k >= 0; --k) {
      const Index c = w % static_cast<Index>(g.outer_extent[k]);
      w /= static_cast<Index>(g.outer_extent[k]);
      oi += c * g.outer_in[k];
      oo += c * g.outer_out[k];
    }
    for (int v = 0; v < Vec; ++v) {
      const Extent x = static_cast<Extent>(v) * per_row;
      if (Add)
        out(oo + x) += in(oi + x);
      else
        out(oo + x) = in(oi + x);
    }
  }
};

// permute's kernels on a device (see TeamTransposeFunctor and ElementPermuteFunctor); `work` counts the
// geometry's work items (tiles times outer indices).
template <bool Add, class ExecutionSpace, class Scalar, class MemorySpace>
void device_permute(const ExecutionSpace& exec, const std::string& label, const PermuteGeometry& g, Extent work,
                    const Tensor<Scalar, MemorySpace>& in, const Tensor<Scalar, MemorySpace>& out) {
  if (!g.same) {
    using F = TeamTransposeFunctor<ExecutionSpace, Scalar, MemorySpace, Add>;
    static_assert(F::tile == PermuteFunctor<Scalar, MemorySpace, Add>::tile, "the geometry's tiles are 32 x 32");
    auto policy = compat::team_policy(exec, static_cast<int>(work), F::team_size);
    Kokkos::parallel_for(label, policy.set_scratch_size(0, Kokkos::PerTeam(F::Tile::shmem_size())),
                         F{in.view(), out.view(), g});
    return;
  }
  const Extent n = in.size();
  auto run = [&](auto functor, Extent per_thread) {
    Kokkos::parallel_for(label, compat::index_range(exec, Extent{0}, n / per_thread), functor);
  };
  const bool narrow = n < (Extent{1} << 31);
  if (narrow && g.extent_a % 4 == 0)
    run(ElementPermuteFunctor<Scalar, MemorySpace, Add, int, 4>{in.view(), out.view(), g}, 4);
  else if (narrow)
    run(ElementPermuteFunctor<Scalar, MemorySpace, Add, int, 1>{in.view(), out.view(), g}, 1);
  else
    run(ElementPermuteFunctor<Scalar, MemorySpace, Add, Extent, 1>{in.view(), out.view(), g}, 1);
}

// Outputs from this size on are transposed with non-temporal stores: they leave the caches before the
// next kernel reads them anyway, and streaming saves reading every output line before writing it.
inline constexpr std::size_t permute_stream_bytes = std::size_t(32) << 20;

// permute (below) with the transposing tiles run by `isa`'s vector kernels, or by the portable functor
// where `isa` is empty; on a device, by device_permute.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void permute_using(const ExecutionSpace& exec, std::optional<simd::Isa> isa, const Tensor<Scalar, MemorySpace>& in,
                   const std::string& labels_in, const Tensor<Scalar, MemorySpace>& out, const std::string& labels_out,
                   bool add) {
  constexpr bool host = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;
  const int rank = in.rank();
  if (static_cast<int>(labels_in.size()) != rank || labels_out.size() != labels_in.size() || out.rank() != rank)
    throw Error("permute: labels '" + labels_in + "' -> '" + labels_out + "' do not fit ranks " + std::to_string(rank) +
                " and " + std::to_string(out.rank()));
  for (int d = 0; d < rank; ++d) {
    const auto pos = labels_out.find(labels_in[d]);
    if (pos == std::string::npos || out.bound()[pos] != in.bound()[d])
      throw Error("permute: '" + labels_out + "' " + to_string(out.bound()) + " is not a reordering of '" + labels_in +
                  "' " + to_string(in.bound()));
  }
  const auto in_strides = c_order_strides(in.bound()), out_strides = c_order_strides(out.bound());
  PermuteGeometry g;
  g.same = rank == 0 || labels_in[rank - 1] == labels_out[rank - 1];
  const bool vector_tiles = host && isa && !g.same;
  // (the device kernels' tiles are PermuteFunctor's 32 x 32)
  g.tile_a = vector_tiles ? VectorTransposeFunctor<Scalar, MemorySpace>::tile_a
                          : PermuteFunctor<Scalar, MemorySpace, false>::tile;
  g.tile_b = vector_tiles ? VectorTransposeFunctor<Scalar, MemorySpace>::tile_b
                          : PermuteFunctor<Scalar, MemorySpace, false>::tile;
  Extent work = 1;
  if (rank > 0) {
    const char a = labels_in[rank - 1], b = labels_out[rank - 1];
    g.extent_a = in.bound()[rank - 1];
    if (!g.same) {
      g.extent_b = out.bound()[rank - 1];
      g.out_stride_a = out_strides[labels_out.find(a)];
      g.in_stride_b = in_strides[labels_in.find(b)];
      g.tiles_a = (g.extent_a + g.tile_a - 1) / g.tile_a;
      g.tiles_b = (g.extent_b + g.tile_b - 1) / g.tile_b;
    }
    for (int d = 0; d < rank; ++d) {
      if (labels_in[d] == a || labels_in[d] == b) continue;
      g.outer_extent[g.num_outer] = in.bound()[d];
      g.outer_in[g.num_outer] = in_strides[d];
      g.outer_out[g.num_outer] = out_strides[labels_out.find(labels_in[d])];
      work *= in.bound()[d];
      ++g.num_outer;
    }
    work *= g.tiles_a * g.tiles_b;
  }
  using Policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Extent>>;
  const std::string label = "einrel::permute[" + labels_in + "->" + labels_out + "]";
  if constexpr (!host) {
    if (add)
      device_permute<true>(exec, label, g, work, in, out);
    else
      device_permute<false>(exec, label, g, work, in, out);
  } else {
    if (vector_tiles) {
      const bool stream = !add && static_cast<std::size_t>(out.size()) * sizeof(Scalar) >= permute_stream_bytes;
      Kokkos::parallel_for(label, Policy(exec, 0, work),
                           VectorTransposeFunctor<Scalar, MemorySpace>{in.view(), out.view(), g, *isa, add, stream});
    } else if (add) {
      Kokkos::parallel_for(label, Policy(exec, 0, work),
                           PermuteFunctor<Scalar, MemorySpace, true>{in.view(), out.view(), g});
    } else {
      Kokkos::parallel_for(label, Policy(exec, 0, work),
                           PermuteFunctor<Scalar, MemorySpace, false>{in.view(), out.view(), g});
    }
  }
}

// out = in with its labels reordered from labels_in to labels_out (the same letters); with add = true,
// out += that instead. Asynchronous on `exec`. On host spaces transposes use the CPU's best vector ISA.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void permute(const ExecutionSpace& exec, const Tensor<Scalar, MemorySpace>& in, const std::string& labels_in,
             const Tensor<Scalar, MemorySpace>& out, const std::string& labels_out, bool add = false) {
  std::optional<simd::Isa> isa;
  if constexpr (Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible) isa = simd::best_isa();
  permute_using(exec, isa, in, labels_in, out, labels_out, add);
}

}  // namespace einrel::kernels

#endif
