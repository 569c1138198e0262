#include <einrel_BlockPool.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace einrel {

std::size_t pool_cache_limit_from_environment() {
  constexpr std::size_t default_limit = std::size_t(1) << 30;
  const char* text = std::getenv("EINREL_POOL_CACHE_BYTES");
  if (!text || !*text) return default_limit;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(text, &end, 10);
  return *end == '\0' ? static_cast<std::size_t>(bytes) : default_limit;
}

void advise_huge_pages([[maybe_unused]] void* data, [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t(2) << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) / huge * huge;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / huge * huge;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
#endif
}

}  // namespace einrel
