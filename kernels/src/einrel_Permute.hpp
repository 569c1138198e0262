#ifndef EINREL_PERMUTE_HPP
#define EINREL_PERMUTE_HPP

#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace einrel::kernels {

// How a permutation walks its tensors, as plain data: the dimension contiguous in the input (a), the
// one contiguous in the output (b), and every other dimension as an outer index.
struct PermuteGeometry {
  static constexpr Extent tile = 32;
  int num_outer = 0;
  Kokkos::Array<Extent, max_rank> outer_extent, outer_in, outer_out;  // extents and strides
  Extent extent_a = 1, extent_b = 1;
  Extent in_stride_b = 0, out_stride_a = 1;  // the non-unit strides of b in the input, a in the output
  bool same = true;                          // a == b: contiguous rows on both sides
  Extent tiles_a = 1, tiles_b = 1;
};

// Cache-blocked: when a != b one thread copies a tile x tile square of (a, b), writing rows along b (the
// inner loop) and reading columns along a, so both sides use whole cache lines while the square stays
// in L1 (32 x 32 and this loop order measured fastest on the development machine: perf_tests); when
// a == b one thread copies one row.
template <class Scalar, class MemorySpace, bool Add>
struct PermuteFunctor {
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
    Extent rest = w;
    const Extent ta = rest % g.tiles_a;
    rest /= g.tiles_a;
    const Extent tb = rest % g.tiles_b;
    rest /= g.tiles_b;
    Extent oi = 0, oo = 0;
    for (int k = g.num_outer - 1; k >= 0; --k) {
      const Extent c = rest % g.outer_extent[k];
      rest /= g.outer_extent[k];
      oi += c * g.outer_in[k];
      oo += c * g.outer_out[k];
    }
    if (g.same) {
      for (Extent x = 0; x < g.extent_a; ++x) put(oo + x, oi + x);
      return;
    }
    const Extent a0 = ta * g.tile, b0 = tb * g.tile;
    if (a0 + g.tile <= g.extent_a && b0 + g.tile <= g.extent_b) {  // a whole tile: constant trip counts
      for (Extent x = a0; x < a0 + g.tile; ++x)
        for (Extent y = b0; y < b0 + g.tile; ++y) put(oo + y + x * g.out_stride_a, oi + x + y * g.in_stride_b);
      return;
    }
    const Extent a1 = a0 + g.tile < g.extent_a ? a0 + g.tile : g.extent_a;
    const Extent b1 = b0 + g.tile < g.extent_b ? b0 + g.tile : g.extent_b;
    for (Extent x = a0; x < a1; ++x)
      for (Extent y = b0; y < b1; ++y) put(oo + y + x * g.out_stride_a, oi + x + y * g.in_stride_b);
  }
};

// out = in with its labels reordered from labels_in to labels_out (the same letters); with add = true,
// out += that instead. Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void permute(const ExecutionSpace& exec, const Tensor<Scalar, MemorySpace>& in, const std::string& labels_in,
             const Tensor<Scalar, MemorySpace>& out, const std::string& labels_out, bool add = false) {
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
  Extent work = 1;
  if (rank > 0) {
    const char a = labels_in[rank - 1], b = labels_out[rank - 1];
    g.same = a == b;
    g.extent_a = in.bound()[rank - 1];
    if (!g.same) {
      g.extent_b = out.bound()[rank - 1];
      g.out_stride_a = out_strides[labels_out.find(a)];
      g.in_stride_b = in_strides[labels_in.find(b)];
      g.tiles_a = (g.extent_a + g.tile - 1) / g.tile;
      g.tiles_b = (g.extent_b + g.tile - 1) / g.tile;
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
  if (add)
    Kokkos::parallel_for(label, Policy(exec, 0, work),
                         PermuteFunctor<Scalar, MemorySpace, true>{in.view(), out.view(), g});
  else
    Kokkos::parallel_for(label, Policy(exec, 0, work),
                         PermuteFunctor<Scalar, MemorySpace, false>{in.view(), out.view(), g});
}

}  // namespace einrel::kernels

#endif
