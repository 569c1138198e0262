#ifndef EINREL_BOXCOPY_HPP
#define EINREL_BOXCOPY_HPP

#include <einrel_Bound.hpp>
#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace einrel {

// Copies a box between two C-order tensors of the same rank: one thread per row of the box (all
// dimensions but the last), a contiguous inner loop along the last one.
template <class Scalar, class MemorySpace>
struct BoxCopyFunctor {
  Kokkos::View<const Scalar*, MemorySpace> src;
  Kokkos::View<Scalar*, MemorySpace> dst;
  Kokkos::Array<Extent, max_rank> extent, src_stride, dst_stride;
  int outer_rank = 0;  // dimensions walked by the thread index
  Extent src_base = 0, dst_base = 0, inner = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent row) const {
    Extent s = src_base, d = dst_base, rest = row;
    for (int k = outer_rank - 1; k >= 0; --k) {
      const Extent c = rest % extent[k];
      rest /= extent[k];
      s += c * src_stride[k];
      d += c * dst_stride[k];
    }
    for (Extent t = 0; t < inner; ++t) dst(d + t) = src(s + t);
  }
};

// dst[dst_lo + x] = src[src_lo + x] for every x < extent. Asynchronous on `exec`; throws Error when the
// box does not fit either tensor.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void copy_box(const ExecutionSpace& exec, const Tensor<Scalar, MemorySpace>& src, const std::vector<Extent>& src_lo,
              const Tensor<Scalar, MemorySpace>& dst, const std::vector<Extent>& dst_lo,
              const std::vector<Extent>& extent) {
  const std::size_t rank = extent.size();
  auto fits = [&](const Bound& b, const std::vector<Extent>& lo) {
    if (b.size() != rank || lo.size() != rank) return false;
    for (std::size_t k = 0; k < rank; ++k)
      if (lo[k] < 0 || extent[k] < 0 || lo[k] + extent[k] > b[k]) return false;
    return true;
  };
  if (!fits(src.bound(), src_lo) || !fits(dst.bound(), dst_lo))
    throw Error("box " + to_string(extent) + " at " + to_string(src_lo) + " of '" + src.label() + "' " +
                to_string(src.bound()) + " does not fit at " + to_string(dst_lo) + " of '" + dst.label() + "' " +
                to_string(dst.bound()));
  if (num_elements(extent) == 0) return;
  BoxCopyFunctor<Scalar, MemorySpace> f{src.view(), dst.view(), {}, {}, {}, 0, 0, 0, 1};
  const auto ss = c_order_strides(src.bound()), ds = c_order_strides(dst.bound());
  for (std::size_t k = 0; k < rank; ++k) {
    f.extent[k] = extent[k];
    f.src_stride[k] = ss[k];
    f.dst_stride[k] = ds[k];
    f.src_base += src_lo[k] * ss[k];
    f.dst_base += dst_lo[k] * ds[k];
  }
  Extent rows = 1;
  if (rank > 0) {
    f.outer_rank = static_cast<int>(rank) - 1;
    f.inner = extent[rank - 1];
    for (std::size_t k = 0; k + 1 < rank; ++k) rows *= extent[k];
  }
  Kokkos::parallel_for("einrel::copy_box",
                       Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Extent>>(exec, 0, rows), f);
}

}  // namespace einrel

#endif
