#ifndef EINREL_BLOCKGRID_HPP
#define EINREL_BLOCKGRID_HPP

#include <einrel_Bound.hpp>

#include <algorithm>
#include <utility>
#include <vector>

namespace einrel {

// A half-open box [lo, hi) of tensor coordinates, one range per dimension.
struct Box {
  std::vector<Extent> lo, hi;

  Extent size() const;
  std::vector<Extent> extents() const;  // hi - lo per dimension
  bool empty() const { return size() == 0; }
  friend bool operator==(const Box& a, const Box& b) { return a.lo == b.lo && a.hi == b.hi; }
};

// The intersection of two boxes of the same rank (empty when they do not overlap).
Box intersect(const Box& a, const Box& b);

// A tensor of bound b cut into parts[d] blocks along each dimension d (TRA paper §3.2, docs/architecture.md).
// Even grids (the planner's): when b[d] is not divisible by parts[d], the first b[d] % parts[d] blocks
// are one larger. Rectilinear grids (from_cuts) place the cuts anywhere: a host code's own decomposition
// refined to a grid. Block keys are coordinates in the grid; they are numbered in C order (the last
// dimension varies fastest).
class BlockGrid {
 public:
  // The even grid. Throws Error unless parts has the rank of bound and 1 <= parts[d] <= bound[d].
  BlockGrid(Bound bound, std::vector<Extent> parts);
  // The grid whose blocks along dimension d start at starts[d] (strictly increasing, first 0, all below
  // bound[d]). Throws Error naming the dimension otherwise.
  static BlockGrid from_cuts(Bound bound, const std::vector<std::vector<Extent>>& starts);
  // The grid of blocks of edge `tile` from the origin: along each dimension the last block is shorter where
  // the extent is no multiple of `tile` (one block where the extent is at most `tile`). Throws Error unless
  // tile >= 1.
  static BlockGrid tiles(Bound bound, Extent tile);

  // Equal grids cut the same bound at the same places (an even grid equals the rectilinear grid with its cuts).
  friend bool operator==(const BlockGrid& a, const BlockGrid& b) {
    return a.bound_ == b.bound_ && a.starts_ == b.starts_;
  }

  const Bound& bound() const { return bound_; }
  const std::vector<Extent>& parts() const { return parts_; }
  int rank() const { return static_cast<int>(bound_.size()); }
  Extent num_blocks() const;

  // Start and extent of block k along dimension d.
  Extent offset(int d, Extent k) const;
  Extent extent(int d, Extent k) const;

  std::vector<Extent> key(Extent id) const;
  Extent id(const std::vector<Extent>& key) const;
  Box box(const std::vector<Extent>& key) const;
  // Block `id`'s extents and its element count: box(key(id)) without building the key and the box (the
  // dry run asks for them once per block of every rank's steps).
  Bound block_bound(Extent id) const;
  void block_bound(Extent id, Bound& bound) const;  // into `bound`, reusing its storage
  Extent block_size(Extent id) const;
  // Whether every block has the same extents (each dimension cut into equal blocks).
  bool uniform() const { return uniform_block_ > 0; }

  // Range [first, last] of block indices along d that overlap coordinates [lo, hi), hi > lo.
  std::pair<Extent, Extent> blocks_overlapping(int d, Extent lo, Extent hi) const;
  // The block along dimension d holding coordinate x.
  Extent block_of(int d, Extent x) const;

 private:
  BlockGrid() = default;
  void find_uniform_block();

  Bound bound_;
  std::vector<Extent> parts_;
  std::vector<std::vector<Extent>> starts_;  // per dimension: the block starts, then bound[d]
  Extent uniform_block_ = 0;                 // the elements of every block where all are alike, else 0
};

// The one walk over the intersections of a box with the blocks of a grid (repartition, redistribution
// plans): calls f(key, overlap) for every block of `grid` that overlaps `box`, keys in C order. Only the
// range of blocks covering the box is visited per dimension, so the cost is the number of overlaps, not
// of blocks. `box` must be non-empty and inside the grid's bound.
template <class F>
void for_each_overlap(const BlockGrid& grid, const Box& box, F&& f) {
  const int rank = grid.rank();
  std::vector<Extent> first(rank), last(rank);
  for (int d = 0; d < rank; ++d) {
    const auto range = grid.blocks_overlapping(d, box.lo[d], box.hi[d]);
    first[d] = range.first;
    last[d] = range.second;
  }
  std::vector<Extent> key = first;
  Box piece{box.lo, box.hi};  // one box for all overlaps: this runs for every block of every exchange planned
  while (true) {
    for (int d = 0; d < rank; ++d) {
      const Extent lo = grid.offset(d, key[d]), hi = lo + grid.extent(d, key[d]);
      piece.lo[d] = std::max(box.lo[d], lo);
      piece.hi[d] = std::max(piece.lo[d], std::min(box.hi[d], hi));
    }
    f(static_cast<const std::vector<Extent>&>(key), static_cast<const Box&>(piece));
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++key[d] <= last[d]) break;
      key[d] = first[d];
    }
    if (d < 0) return;
  }
}

}  // namespace einrel

#endif
