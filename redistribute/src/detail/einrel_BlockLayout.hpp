#ifndef EINREL_BLOCKLAYOUT_HPP
#define EINREL_BLOCKLAYOUT_HPP

#include <einrel_BlockGrid.hpp>
#include <einrel_Placement.hpp>

#include <cstdint>
#include <vector>

namespace einrel::redistribute {

// Where the blocks of a distributed tensor live: a BlockGrid (bound cut into blocks) plus a Placement
// of its blocks on ranks (TRA paper §4: Part_D, All, or any set of sites per block). Block ids are the
// grid's C-order numbers.
class BlockLayout {
 public:
  // Blocks spread evenly in C order over num_ranks (Placement::spread). Throws Error unless num_ranks >= 1.
  BlockLayout(BlockGrid grid, int num_ranks);
  // Throws Error unless the placement has one entry per block of the grid.
  BlockLayout(BlockGrid grid, Placement placement);

  const BlockGrid& grid() const { return grid_; }
  const Placement& placement() const { return placement_; }
  int num_ranks() const { return placement_.num_ranks(); }
  int owner(Extent block) const { return placement_.owner(block); }
  std::vector<Extent> blocks_of(int rank) const { return placement_.blocks_of(rank); }

  // A 64-bit digest of the grid and the sites: equal layouts have equal digests, so a memo of what is computed
  // from layouts finds an entry by digest and compares the layouts only then (TransitionChooser). O(blocks + sites),
  // nothing allocated.
  std::uint64_t digest() const;

  friend bool operator==(const BlockLayout& a, const BlockLayout& b) {
    return a.grid_ == b.grid_ && a.placement_ == b.placement_;
  }

 private:
  BlockGrid grid_;
  Placement placement_;
};

}  // namespace einrel::redistribute

#endif
