#ifndef EINREL_BLOCKLAYOUT_HPP
#define EINREL_BLOCKLAYOUT_HPP

#include <einrel_BlockGrid.hpp>

#include <vector>

namespace einrel::redistribute {

// Where the blocks of a partitioned tensor live: a BlockGrid plus an owner rank per block (the site
// map Part_D of the TRA paper §4). Blocks are spread evenly in C order: block b of n goes to rank
// floor(b * R / n), so with n >= R every rank holds floor(n/R) or ceil(n/R) consecutive blocks.
class BlockLayout {
 public:
  // Throws Error unless num_ranks >= 1.
  BlockLayout(BlockGrid grid, int num_ranks);

  const BlockGrid& grid() const { return grid_; }
  int num_ranks() const { return num_ranks_; }
  int owner(Extent block) const;
  std::vector<Extent> blocks_of(int rank) const;

 private:
  BlockGrid grid_;
  int num_ranks_;
};

// One sub-block that moves when a tensor changes layout: `box` (global coordinates) is the overlap of
// source block `source_block` (on `source_rank`) with target block `target_block` (on `target_rank`).
struct Transfer {
  Extent source_block = 0;
  Extent target_block = 0;
  int source_rank = 0;
  int target_rank = 0;
  Box box;
};

// The transfers `rank` sends (its source blocks against every target block) and receives (its target
// blocks against every source block), in increasing block order. Both layouts must share the bound;
// a transfer with source_rank == target_rank is a local copy. Throws Error on different bounds.
std::vector<Transfer> transfers_sent_by(const BlockLayout& from, const BlockLayout& to, int rank);
std::vector<Transfer> transfers_received_by(const BlockLayout& from, const BlockLayout& to, int rank);

}  // namespace einrel::redistribute

#endif
