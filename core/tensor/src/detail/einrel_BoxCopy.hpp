#ifndef EINREL_BOXCOPY_HPP
#define EINREL_BOXCOPY_HPP

#include <einrel_Bound.hpp>
#include <einrel_Error.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace einrel {

// Copies elements [first, last) of a box's C-order enumeration between two C-order arrays: one thread
// per row of the box (all dimensions but the last), a contiguous inner loop along the last one, clipped
// to the range at the first and last row.
template <class Scalar, class MemorySpace>
struct BoxCopyFunctor {
  Kokkos::View<const Scalar*, MemorySpace> src;
  Kokkos::View<Scalar*, MemorySpace> dst;
  Kokkos::Array<Extent, max_rank> extent, src_stride, dst_stride;
  int outer_rank = 0;  // dimensions walked by the thread index
  Extent src_base = 0, dst_base = 0, inner = 1, first = 0, last = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const Extent row) const {
    Extent s = src_base, d = dst_base, rest = row;
    for (int k = outer_rank - 1; k >= 0; --k) {
      const Extent c = rest % extent[k];
      rest /= extent[k];
      s += c * src_stride[k];
      d += c * dst_stride[k];
    }
    const Extent begin = first > row * inner ? first - row * inner : 0;
    const Extent end = last < (row + 1) * inner ? last - row * inner : inner;
    for (Extent t = begin; t < end; ++t) dst(d + t) = src(s + t);
  }
};

// A box's place inside a C-order array of bound `array` whose first element is element `base` of a 1-d
// view: the box starts at `lo`. (A block is {view, 0, bound, lo}; a packed message buffer holding the box
// alone is {buffer, offset, extent, zeros}.)
template <class ViewType>
struct BoxPlace {
  ViewType view;
  Extent base = 0;
  Bound array;
  std::vector<Extent> lo;
};

// Copies elements [first, last) of the C-order enumeration of a box of extents `extent` from `src` to
// `dst` (the whole box: first = 0, last = its size). Asynchronous on `exec`; throws Error when the box
// does not fit either array or the range is not inside the box.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void copy_box_range(const ExecutionSpace& exec, const BoxPlace<Kokkos::View<const Scalar*, MemorySpace>>& src,
                    const BoxPlace<Kokkos::View<Scalar*, MemorySpace>>& dst, const std::vector<Extent>& extent,
                    Extent first, Extent last) {
  const std::size_t rank = extent.size();
  auto fits = [&](const Bound& b, const std::vector<Extent>& lo) {
    if (b.size() != rank || lo.size() != rank) return false;
    for (std::size_t k = 0; k < rank; ++k)
      if (lo[k] < 0 || extent[k] < 0 || lo[k] + extent[k] > b[k]) return false;
    return true;
  };
  if (!fits(src.array, src.lo) || !fits(dst.array, dst.lo))
    throw Error("box " + to_string(extent) + " at " + to_string(src.lo) + " of '" + src.view.label() + "' " +
                to_string(src.array) + " does not fit at " + to_string(dst.lo) + " of '" + dst.view.label() + "' " +
                to_string(dst.array));
  if (first < 0 || last > num_elements(extent) || first > last)
    throw Error("element range [" + std::to_string(first) + ", " + std::to_string(last) + ") is outside box " +
                to_string(extent));
  if (first == last) return;
  BoxCopyFunctor<Scalar, MemorySpace> f{src.view, dst.view, {}, {}, {}, 0, src.base, dst.base, 1, first, last};
  const auto ss = c_order_strides(src.array), ds = c_order_strides(dst.array);
  for (std::size_t k = 0; k < rank; ++k) {
    f.extent[k] = extent[k];
    f.src_stride[k] = ss[k];
    f.dst_stride[k] = ds[k];
    f.src_base += src.lo[k] * ss[k];
    f.dst_base += dst.lo[k] * ds[k];
  }
  if (rank > 0) {
    f.outer_rank = static_cast<int>(rank) - 1;
    f.inner = extent[rank - 1];
  }
  Kokkos::parallel_for("einrel::copy_box", compat::index_range(exec, first / f.inner, (last + f.inner - 1) / f.inner),
                       f);
}

// dst[dst_lo + x] = src[src_lo + x] for every x < extent. Asynchronous on `exec`; throws Error when the
// box does not fit either tensor.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void copy_box(const ExecutionSpace& exec, const Tensor<Scalar, MemorySpace>& src, const std::vector<Extent>& src_lo,
              const Tensor<Scalar, MemorySpace>& dst, const std::vector<Extent>& dst_lo,
              const std::vector<Extent>& extent) {
  copy_box_range(exec, BoxPlace<Kokkos::View<const Scalar*, MemorySpace>>{src.view(), 0, src.bound(), src_lo},
                 BoxPlace<Kokkos::View<Scalar*, MemorySpace>>{dst.view(), 0, dst.bound(), dst_lo}, extent, 0,
                 num_elements(extent));
}

// Sets every element of a box of extents `extent` at `lo` of `dst` to `value`: one thread per row of the box,
// a contiguous inner loop along the last dimension. Asynchronous on `exec`; throws Error when the box does
// not fit.
template <class Scalar, class MemorySpace>
struct BoxFillFunctor {
  Kokkos::View<Scalar*, MemorySpace> dst;
  Kokkos::Array<Extent, max_rank> extent, stride;
  int outer_rank = 0;
  Extent base = 0, inner = 1;
  Scalar value{};

  KOKKOS_INLINE_FUNCTION void operator()(const Extent row) const {
    Extent d = base, rest = row;
    for (int k = outer_rank - 1; k >= 0; --k) {
      d += (rest % extent[k]) * stride[k];
      rest /= extent[k];
    }
    for (Extent t = 0; t < inner; ++t) dst(d + t) = value;
  }
};

template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_box(const ExecutionSpace& exec, const Tensor<Scalar, MemorySpace>& dst, const std::vector<Extent>& lo,
              const std::vector<Extent>& extent, Scalar value) {
  const std::size_t rank = extent.size();
  bool fits = dst.bound().size() == rank && lo.size() == rank;
  for (std::size_t k = 0; fits && k < rank; ++k)
    fits = lo[k] >= 0 && extent[k] >= 0 && lo[k] + extent[k] <= dst.bound()[k];
  if (!fits)
    throw Error("box " + to_string(extent) + " at " + to_string(lo) + " does not fit '" + dst.view().label() + "' " +
                to_string(dst.bound()));
  if (num_elements(extent) == 0) return;
  BoxFillFunctor<Scalar, MemorySpace> f{dst.view(), {}, {}, 0, 0, 1, value};
  const auto strides = c_order_strides(dst.bound());
  for (std::size_t k = 0; k < rank; ++k) {
    f.extent[k] = extent[k];
    f.stride[k] = strides[k];
    f.base += lo[k] * strides[k];
  }
  if (rank > 0) {
    f.outer_rank = static_cast<int>(rank) - 1;
    f.inner = extent[rank - 1];
  }
  Kokkos::parallel_for("einrel::fill_box", compat::index_range(exec, Extent{0}, num_elements(extent) / f.inner), f);
}

}  // namespace einrel

#endif
