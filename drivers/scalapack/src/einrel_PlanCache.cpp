#include <einrel_PlanCache.hpp>

#include <algorithm>
#include <cstdlib>

namespace einrel::scalapack {
namespace {

std::size_t from_environment(const char* name, long fallback) {
  const char* text = std::getenv(name);
  const long n = text && *text ? std::strtol(text, nullptr, 10) : fallback;
  return static_cast<std::size_t>(std::max(1L, n));
}

// Call counts kept for this many keys at most (a run with more distinct products starts counting again).
constexpr std::size_t kCountedKeys = 4096;

}  // namespace

std::size_t PlanCache::max_products() {
  static const std::size_t kept = from_environment("EINREL_SCALAPACK_CACHE", 16);
  return kept;
}

std::size_t PlanCache::max_bytes() {
  static const std::size_t bytes = from_environment("EINREL_SCALAPACK_CACHE_MB", 512) << 20;
  return bytes;
}

std::shared_ptr<void> PlanCache::find(const PlanKey& key) {
  const auto known = where_.find(key);
  if (known == where_.end()) return nullptr;
  order_.splice(order_.begin(), order_, known->second);
  return order_.front().second.product;
}

void PlanCache::keep(const PlanKey& key, std::shared_ptr<void> product, std::size_t bytes) {
  if (const auto known = where_.find(key); known != where_.end()) {
    bytes_ -= known->second->second.bytes;
    order_.erase(known->second);
    where_.erase(known);
  }
  order_.emplace_front(key, Entry{std::move(product), bytes});
  where_[key] = order_.begin();
  bytes_ += bytes;
  while (!order_.empty() && (order_.size() > max_products() || bytes_ > max_bytes())) {
    bytes_ -= order_.back().second.bytes;
    where_.erase(order_.back().first);
    order_.pop_back();
  }
}

std::int64_t PlanCache::count_call(const PlanKey& key) {
  if (calls_.size() >= kCountedKeys && !calls_.count(key)) calls_.clear();
  return ++calls_[key];
}

}  // namespace einrel::scalapack
