#include <einrel_Bound.hpp>
#include <einrel_Error.hpp>

#include <limits>
#include <optional>

namespace einrel {

std::vector<Extent> prime_factors(Extent n) {
  std::vector<Extent> factors;
  for (Extent f = 2; f * f <= n; ++f)
    for (; n % f == 0; n /= f) factors.push_back(f);
  if (n > 1) factors.push_back(n);
  return factors;
}

Extent num_elements(const Bound& b) {
  Extent n = 1;
  for (Extent e : b) {
    if (e < 0) throw Error("negative extent " + std::to_string(e) + " in bound " + to_string(b));
    if (e != 0 && n > std::numeric_limits<Extent>::max() / e)
      throw Error("bound " + to_string(b) + " has more elements than fit in 64 bits");
    n *= e;
  }
  return n;
}

std::string to_string(const Bound& b) {
  std::string s = "[";
  for (std::size_t i = 0; i < b.size(); ++i) s += (i ? "," : "") + std::to_string(b[i]);
  return s + "]";
}

std::optional<std::string> bound_problem(const Bound& b) {
  if (static_cast<int>(b.size()) > max_rank)
    return " has rank " + std::to_string(b.size()) + "; at most " + std::to_string(max_rank) +
           " dimensions are supported";
  for (Extent e : b)
    if (e <= 0) return " has extent " + std::to_string(e) + " in " + to_string(b) + "; extents must be positive";
  num_elements(b);
  return std::nullopt;
}

void check_bound(const Bound& b, const std::string& what) {
  if (const auto problem = bound_problem(b)) throw Error(what + *problem);
}

}  // namespace einrel
