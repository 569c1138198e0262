#ifndef EINREL_TESTLAYOUTS_HPP
#define EINREL_TESTLAYOUTS_HPP

// Seeded random block layouts for redistribution tests: uneven grids and every kind of placement.
// Every rank draws the same layouts from the same seed.

#include <einrel_BlockLayout.hpp>
#include <einrel_Tensor.hpp>
#include <einrel_TestHelpers.hpp>

#include <random>
#include <string>
#include <vector>

namespace einrel::test {

// A bound of rank 0-4 with extents 1-13 (mostly not divisible by the parts drawn for it).
inline Bound random_bound(std::mt19937& gen, int max_rank = 4, Extent max_extent = 13) {
  Bound b(std::uniform_int_distribution<int>(0, max_rank)(gen));
  for (Extent& e : b) e = std::uniform_int_distribution<Extent>(1, max_extent)(gen);
  return b;
}

// A random placement of `grid`'s blocks on `ranks` ranks: spread, replicated, one random owner per block, or a
// random non-empty set of sites per block.
inline redistribute::BlockLayout random_layout(std::mt19937& gen, const BlockGrid& grid, int ranks) {
  const Extent n = grid.num_blocks();
  using redistribute::Placement;
  switch (std::uniform_int_distribution<int>(0, 9)(gen)) {
    case 0:
      return {grid, Placement::replicated(n, ranks)};
    case 1:
    case 2:
    case 3: {
      std::vector<int> owner(n);
      for (int& o : owner) o = std::uniform_int_distribution<int>(0, ranks - 1)(gen);
      return {grid, Placement::owners(owner, ranks)};
    }
    case 4:
    case 5: {
      std::vector<std::vector<int>> sites(n);
      for (auto& s : sites) {
        for (int r = 0; r < ranks; ++r)
          if (gen() % 2) s.push_back(r);
        if (s.empty()) s.push_back(std::uniform_int_distribution<int>(0, ranks - 1)(gen));
      }
      return {grid, Placement::sites(sites, ranks)};
    }
    default:
      return {grid, ranks};
  }
}

// The same on a random grid of `bound`: 1 to 5 parts per dimension.
inline redistribute::BlockLayout random_layout(std::mt19937& gen, const Bound& bound, int ranks) {
  std::vector<Extent> parts;
  for (Extent e : bound) parts.push_back(std::uniform_int_distribution<Extent>(1, std::min<Extent>(e, 5))(gen));
  return random_layout(gen, BlockGrid(bound, parts), ranks);
}

inline std::string describe(const redistribute::BlockLayout& l) {
  std::string s = to_string(l.grid().bound()) + " cut " + to_string(l.grid().parts()) + " sites";
  for (Extent b = 0; b < l.grid().num_blocks(); ++b) {
    s += " {";
    for (int i = 0; i < l.placement().num_sites(b); ++i) s += (i ? "," : "") + std::to_string(l.placement().site(b, i));
    s += "}";
  }
  return s;
}

}  // namespace einrel::test

#endif
