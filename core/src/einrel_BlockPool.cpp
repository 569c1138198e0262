#include <einrel_BlockPool.hpp>

#include <cstdlib>
#include <string>

namespace einrel {

std::size_t pool_cache_limit_from_environment() {
  constexpr std::size_t default_limit = std::size_t(1) << 30;
  const char* text = std::getenv("EINREL_POOL_CACHE_BYTES");
  if (!text || !*text) return default_limit;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(text, &end, 10);
  return *end == '\0' ? static_cast<std::size_t>(bytes) : default_limit;
}

}  // namespace einrel
