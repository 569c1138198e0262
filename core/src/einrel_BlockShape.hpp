#ifndef EINREL_BLOCKSHAPE_HPP
#define EINREL_BLOCKSHAPE_HPP

#include <einrel_BlockGrid.hpp>
#include <einrel_EinSum.hpp>

#include <vector>

namespace einrel {

// The shape of a block-sparse tensor relation (tensor-relational-algebra.txt §3: a relation need not hold
// every key; docs/sparse.md): a grid over the tensor and which of its blocks are present. Every element of
// an absent block is zero; a present block may hold zeros too.
class BlockShape {
 public:
  // Throws Error unless `present` has one entry per block of the grid.
  BlockShape(BlockGrid grid, std::vector<bool> present);
  // With an upper bound on each block's Frobenius norm (docs/sparse.md "Screening by norms"), one entry per block,
  // each non-negative (0 where absent). Throws Error otherwise.
  BlockShape(BlockGrid grid, std::vector<bool> present, std::vector<double> norms);

  const BlockGrid& grid() const { return grid_; }
  bool present(Extent block) const { return present_[static_cast<std::size_t>(block)]; }
  const std::vector<bool>& mask() const { return present_; }
  Extent num_present() const;
  // The fraction of the tensor's elements that lie in present blocks.
  double density() const;
  // Whether the shape bounds its blocks' norms, and the bound of block `block`.
  bool has_norms() const { return !norms_.empty(); }
  double norm(Extent block) const { return norms_[static_cast<std::size_t>(block)]; }
  const std::vector<double>& norms() const { return norms_; }
  // The shape of the same tensor cut by `grid`: a block is present when it overlaps a present block here
  // (exact: a block of `grid` that overlaps none is all zero); its norm bound, where this shape has them, is
  // sqrt of the sum of the squared bounds of the blocks it overlaps (its elements lie in theirs). Throws Error
  // for another bound.
  BlockShape on(const BlockGrid& grid) const;

  friend bool operator==(const BlockShape& a, const BlockShape& b) {
    return a.grid_ == b.grid_ && a.present_ == b.present_ && a.norms_ == b.norms_;
  }

 private:
  BlockGrid grid_;
  std::vector<bool> present_;
  std::vector<double> norms_;  // empty: not known
};

// How an EinSum treats its operands' absent blocks (docs/sparse.md "Which vertices stay sparse").
enum class SparseRule {
  // Computed dense: absent operand blocks are read as zeros, and the output is dense.
  dense,
  // Zero annihilates the join (mul; any unary EinSum): a join tuple runs only where the block of every sparse
  // operand it reads is present, and an output block no tuple feeds is absent (the intersection).
  intersection,
  // The join of two zeros is zero (add, sub, max, min, sqdiff, absdiff): where every operand is sparse, a join
  // tuple runs where the block of any operand is present, its absent ones read as zeros, and an output block no
  // tuple feeds is absent (the union). With a dense operand the vertex is computed dense.
  union_of_shapes,
};

// The rule of `e`: intersection or union by its join as above when its map keeps zero (f(0) = 0) and its
// aggregation, if any label is aggregated, is sum (zero is its identity); dense otherwise.
SparseRule sparse_rule(const EinSum& e);

}  // namespace einrel

#endif
