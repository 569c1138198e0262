#ifndef EINREL_BOUND_HPP
#define EINREL_BOUND_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace einrel {

using Extent = std::int64_t;

// The shape of a tensor: one extent per dimension, C (row-major) order. Rank 0 is a scalar.
using Bound = std::vector<Extent>;

// Tensors have at most this many dimensions.
inline constexpr int max_rank = 8;

// True for 1, 2, 4, ...: the part counts of a partition vector and the processor counts p.
constexpr bool is_power_of_two(Extent n) { return n >= 1 && (n & (n - 1)) == 0; }

// Number of elements (1 for a scalar). Throws if an extent is negative or the product overflows.
Extent num_elements(const Bound& b);

// "[1000,100]"; "[]" for a scalar.
std::string to_string(const Bound& b);

// Throws Error unless b has rank <= max_rank and positive extents; `what` names the tensor.
void check_bound(const Bound& b, const std::string& what);

}  // namespace einrel

#endif
