#ifndef EINREL_PLANCACHE_HPP
#define EINREL_PLANCACHE_HPP

// The products einrel keeps planned for one BLACS grid between calls, least recently used dropped first,
// bounded by count and by bytes. Every process of the grid makes the same calls in the same order and counts
// every product's bytes alike (from global quantities), so the processes keep and drop the same products: a
// product's program is then freed, and planned again, on all of them together.

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <vector>

namespace einrel::scalapack {

using PlanKey = std::vector<std::int64_t>;

class PlanCache {
 public:
  // EINREL_SCALAPACK_CACHE (products, default 16: each holds an MPI communicator) and EINREL_SCALAPACK_CACHE_MB
  // (megabytes per process, default 512), read once.
  static std::size_t max_products();
  static std::size_t max_bytes();

  // The product planned for `key`, now the most recently used, or null.
  std::shared_ptr<void> find(const PlanKey& key);
  // Keeps `product` (`bytes` per process) as the most recently used, then drops the least recently used ones
  // beyond the bounds: `product` too, where it alone is larger than the byte bound.
  void keep(const PlanKey& key, std::shared_ptr<void> product, std::size_t bytes);
  // How often a product has been called with `key` so far (this call included), planned or not: a product is
  // planned once its calls' gains pay for it (plan_pays). Keys are forgotten beyond a bound.
  std::int64_t count_call(const PlanKey& key);

  std::size_t products() const { return order_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::shared_ptr<void> product;
    std::size_t bytes;
  };
  std::list<std::pair<PlanKey, Entry>> order_;  // most recently used first
  std::map<PlanKey, std::list<std::pair<PlanKey, Entry>>::iterator> where_;
  std::size_t bytes_ = 0;
  std::map<PlanKey, std::int64_t> calls_;
};

}  // namespace einrel::scalapack

#endif
