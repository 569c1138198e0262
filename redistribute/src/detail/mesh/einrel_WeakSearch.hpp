#ifndef EINREL_WEAKSEARCH_HPP
#define EINREL_WEAKSEARCH_HPP

#include <einrel_Reshard.hpp>

#include <array>
#include <cstdint>
#include <vector>

// The shortest-path search of array-redistribution-collectives.txt §7.2 over weak types (§5), used by
// synthesize_reshard; internal to einrel_redistribute.
namespace einrel::redistribute::mesh::detail {

// A step of the weak search (paper §5, §7.2): which collective, on which dimensions, moving how large a
// factor of the mesh (the product of the prime axes it moves; which axes is decided when lowering).
struct WeakStep {
  Collective op;
  std::vector<std::size_t> dims;
  Extent factor;
};

// A weak type (paper §7.2: with the global shape fixed, the local shape identifies it): per dimension the
// number of tiles it is cut into (global / local extent, a product of prime axis sizes), and after them the
// product of the prime axes whose reduction is still pending. Compact, for a fast search.
using WeakType = std::array<std::int32_t, max_rank + 1>;

struct WeakTypeHash {
  std::size_t operator()(const WeakType& t) const {
    std::size_t h = 0;
    for (std::int32_t e : t) h = h * 1000003u ^ static_cast<std::size_t>(e);
    return h;
  }
};

// A sequence of weak collectives and its cost.
struct WeakPath {
  Extent cost = 0;
  std::vector<WeakStep> steps;
};

// The cheapest weak paths from `from` to `to` in the graph of for_each_weak_edge, in order of (cost, number
// of steps): Dijkstra where each type may be reached `per_type` times (the k shortest walks; 1: plain
// Dijkstra, paper §7.2), paths costing more than `bound` dropped, at most `paths` of them, and at most
// `work` labels made (then the paths found so far).
std::vector<WeakPath> weak_paths(const std::vector<Extent>& global, const WeakType& from, const WeakType& to,
                                 Extent mesh_size, Extent height, int per_type, std::size_t paths, Extent bound,
                                 std::size_t work);

}  // namespace einrel::redistribute::mesh::detail

#endif
