#ifndef EINREL_BLOCKPOOL_HPP
#define EINREL_BLOCKPOOL_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace einrel {

// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) of a fresh, untouched host
// buffer with transparent huge pages (madvise MADV_HUGEPAGE; Debian enables them on request only): the
// first touch of a large block then faults 512 times less often. Does nothing for small buffers or
// where the call is unavailable.
void advise_huge_pages(void* data, std::size_t bytes);

// What a BlockPool did since it was created (or its statistics were reset).
struct PoolStatistics {
  long long fresh_allocations = 0;  // Kokkos allocations made
  long long reuses = 0;             // requests served by a cached buffer
  std::size_t bytes_held = 0;       // all buffers the pool holds now, in use or free
  std::size_t bytes_in_use = 0;     // buffers some block still uses
  std::size_t peak_bytes_held = 0;  // the most bytes_held has been (since creation or the reset)
};

// A caching pool of block memory for one memory space: the memory every einrel block (Tensor::uninitialized,
// so the engine's operand copies, partials, reduction buffers and the kernels' temporaries) comes from. A
// request is rounded up to a size class (eight classes per power of two, so at most 1/8 is wasted) and
// served by a cached buffer of that class no block uses any more, or by a fresh allocation. A block is a
// subview of its buffer: Kokkos' reference count says when every block cut from it is gone, so blocks stay
// ordinary Kokkos views that einrel and host codes pass around freely. A graph executed again with the same
// shapes (a time loop) makes no allocation after the first execution. Large host buffers are advised
// for transparent huge pages before their first touch (advise_huge_pages).
//
// A size class of up to `full_search` buffers is searched whole for a free one; a larger class (a
// block-sparse vertex holds thousands of equal blocks) `window` buffers at a time from where the last search
// ended, so that a request costs a bounded number of checks instead of one per buffer: a free buffer the
// window misses is found by a later request, at the price of a few more buffers than the fewest possible.
//
// Free buffers are kept up to cache_limit bytes (EINREL_POOL_CACHE_BYTES, default 1 GiB); beyond it the
// largest free buffers are released when a fresh allocation is made. The pool is emptied by a
// Kokkos::finalize hook, before Kokkos frees its spaces. Host code only; thread-safe.
template <class MemorySpace>
class BlockPool {
 public:
  static BlockPool& instance() {
    static BlockPool* pool = create();
    return *pool;
  }

  // n elements of Scalar (n >= 0) whose contents are left unset; `label` names a fresh allocation in
  // Kokkos tools (einrel::pool/<label>).
  template <class Scalar>
  Kokkos::View<Scalar*, MemorySpace> acquire(const std::string& label, std::size_t n) {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>, "einrel blocks are f32 or f64");
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t elements = size_class(n);
    SizeClass<Scalar>& size = lists<Scalar>()[elements];
    auto& buffers = size.buffers;
    const std::size_t checks = buffers.size() <= full_search ? buffers.size() : window;
    for (std::size_t i = 0; i < checks; ++i) {
      const std::size_t at = (size.cursor + i) % buffers.size();
      if (buffers[at].use_count() == 1) {
        size.cursor = at + 1;
        ++stats_.reuses;
        return Kokkos::subview(buffers[at], std::make_pair(std::size_t(0), n));
      }
    }
    if (!buffers.empty()) size.cursor = (size.cursor + checks) % buffers.size();
    trim();
    buffers.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "einrel::pool/" + label), elements);
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible)
      advise_huge_pages(buffers.back().data(), elements * sizeof(Scalar));
    ++stats_.fresh_allocations;
    held_bytes_ += elements * sizeof(Scalar);
    stats_.peak_bytes_held = std::max(stats_.peak_bytes_held, held_bytes_);
    return Kokkos::subview(buffers.back(), std::make_pair(std::size_t(0), n));
  }

  PoolStatistics statistics() const {
    std::lock_guard<std::mutex> lock(mutex_);
    PoolStatistics s = stats_;
    for_each_buffer([&](std::size_t bytes, bool used) {
      s.bytes_held += bytes;
      if (used) s.bytes_in_use += bytes;
    });
    return s;
  }
  // Zeroes the counts; the peak restarts from the bytes held now.
  void reset_statistics() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_ = {};
    stats_.peak_bytes_held = held_bytes_;
  }

  std::size_t cache_limit() const { return cache_limit_; }
  void set_cache_limit(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    cache_limit_ = bytes;
  }

  // Frees every buffer no block uses.
  void release_unused() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_free(0);
  }

  // The element count a request of n elements is rounded up to.
  static std::size_t size_class(std::size_t n) {
    if (n <= 16) return n;
    std::size_t top = 1;
    while (top * 2 <= n) top *= 2;  // the power of two at or below n
    const std::size_t step = top / 8;
    return (n + step - 1) / step * step;
  }

 private:
  static constexpr std::size_t full_search = 1024, window = 32;

  // The buffers of one size class, and where the next search starts.
  template <class Scalar>
  struct SizeClass {
    std::vector<Kokkos::View<Scalar*, MemorySpace>> buffers;
    std::size_t cursor = 0;
  };
  template <class Scalar>
  using Lists = std::map<std::size_t, SizeClass<Scalar>>;

  static BlockPool* create() {
    auto* pool = new BlockPool();  // lives for the process; emptied when Kokkos finalizes
    Kokkos::push_finalize_hook([pool] {
      std::lock_guard<std::mutex> lock(pool->mutex_);
      pool->floats_.clear();
      pool->doubles_.clear();
      pool->held_bytes_ = 0;
    });
    return pool;
  }
  BlockPool();

  template <class Scalar>
  Lists<Scalar>& lists() {
    if constexpr (std::is_same_v<Scalar, float>)
      return floats_;
    else
      return doubles_;
  }

  template <class F>
  void for_each_buffer(F&& f) const {
    for (const auto& [n, size] : floats_)
      for (const auto& b : size.buffers) f(n * sizeof(float), b.use_count() > 1);
    for (const auto& [n, size] : doubles_)
      for (const auto& b : size.buffers) f(n * sizeof(double), b.use_count() > 1);
  }

  // Releases free buffers, largest first, until at most `keep` free bytes remain cached (none to release when
  // the pool holds no more than that in all).
  void release_free(std::size_t keep) {
    if (held_bytes_ <= keep) return;
    std::size_t free_bytes = 0;
    for_each_buffer([&](std::size_t bytes, bool used) { free_bytes += used ? 0 : bytes; });
    auto drop = [&](auto& lists, std::size_t element_bytes) {
      for (auto it = lists.rbegin(); it != lists.rend() && free_bytes > keep; ++it) {
        auto& list = it->second.buffers;
        for (std::size_t i = list.size(); i-- > 0 && free_bytes > keep;)
          if (list[i].use_count() == 1) {
            free_bytes -= it->first * element_bytes;
            held_bytes_ -= it->first * element_bytes;
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          }
        it->second.cursor = 0;
      }
    };
    drop(doubles_, sizeof(double));
    drop(floats_, sizeof(float));
  }
  void trim() { release_free(cache_limit_); }

  mutable std::mutex mutex_;
  Lists<float> floats_;
  Lists<double> doubles_;
  PoolStatistics stats_;
  std::size_t held_bytes_ = 0;  // bytes_held, kept up to date for the peak
  std::size_t cache_limit_;
};

// The cache limit from EINREL_POOL_CACHE_BYTES (a byte count), else 1 GiB.
std::size_t pool_cache_limit_from_environment();

template <class MemorySpace>
BlockPool<MemorySpace>::BlockPool() : cache_limit_(pool_cache_limit_from_environment()) {}

}  // namespace einrel

#endif
