#ifndef EINREL_BOUND_HPP
#define EINREL_BOUND_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace einrel {

using Extent = std::int64_t;

// The shape of a tensor: one extent per dimension, C (row-major) order. Rank 0 is a scalar.
using Bound = std::vector<Extent>;

// Tensors have at most this many dimensions.
inline constexpr int max_rank = 8;

// The prime factors of n >= 1 in increasing order, repeated by multiplicity (empty for 1): how the planner
// hands out cuts and how a device mesh splits into prime axes.
std::vector<Extent> prime_factors(Extent n);

// Number of elements (1 for a scalar). Throws if an extent is negative or the product overflows.
Extent num_elements(const Bound& b);

// "[1000,100]"; "[]" for a scalar.
std::string to_string(const Bound& b);

// What is wrong with b as a tensor's bound (" has rank 9; ...", to follow the tensor's name), or nothing
// where it has rank <= max_rank and positive extents. Throws where its element count overflows.
std::optional<std::string> bound_problem(const Bound& b);

// Throws Error unless b has rank <= max_rank and positive extents; `what` names the tensor.
void check_bound(const Bound& b, const std::string& what);

}  // namespace einrel

#endif
