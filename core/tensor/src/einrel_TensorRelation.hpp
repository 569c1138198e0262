#ifndef EINREL_TENSORRELATION_HPP
#define EINREL_TENSORRELATION_HPP

#include <einrel_BlockGrid.hpp>
#include <einrel_BoxCopy.hpp>
#include <einrel_Relation.hpp>

#include <string>
#include <vector>

namespace einrel {

// A tensor stored as a tensor relation (eindecomp.txt §4.1): bound b, partition d (parts per dimension)
// and one block per key in I(d), the block of key k holding the elements of BlockGrid(b, d).box(k).
// Uneven extents are allowed (DESIGN.md §2). The constructor checks the invariants: keys unique, no
// holes, no extra keys, every block of the shape its key implies.
template <class Scalar, class MemorySpace>
class TensorRelation {
 public:
  using block_type = Tensor<Scalar, MemorySpace>;
  using relation_type = Relation<Scalar, MemorySpace>;

  TensorRelation(const Bound& bound, const std::vector<Extent>& parts, relation_type blocks)
      : grid_(bound, parts), blocks_(std::move(blocks)) {
    if (blocks_.key_arity() != grid_.rank())
      throw Error("a tensor relation of rank " + std::to_string(grid_.rank()) + " needs keys of that arity, got " +
                  std::to_string(blocks_.key_arity()));
    for (const auto& [key, block] : blocks_) {
      for (int d = 0; d < grid_.rank(); ++d)
        if (key[d] >= parts[d]) throw Error("key " + to_string(key) + " is outside the partition " + to_string(parts));
      Bound expected;
      for (int d = 0; d < grid_.rank(); ++d) expected.push_back(grid_.extent(d, key[d]));
      if (block.bound() != expected)
        throw Error("block " + to_string(key) + " has shape " + to_string(block.bound()) + " but bound " +
                    to_string(bound) + " cut " + to_string(parts) + " gives it " + to_string(expected));
    }
    // Unique keys inside I(d), as many as I(d) has: no holes.
    if (static_cast<Extent>(blocks_.size()) != grid_.num_blocks()) blocks_.check_continuity();
    if (static_cast<Extent>(blocks_.size()) != grid_.num_blocks())
      throw Error("a tensor relation with partition " + to_string(parts) + " needs " +
                  std::to_string(grid_.num_blocks()) + " blocks, got " + std::to_string(blocks_.size()));
  }

  const BlockGrid& grid() const { return grid_; }
  const Bound& bound() const { return grid_.bound(); }
  const std::vector<Extent>& parts() const { return grid_.parts(); }
  int rank() const { return grid_.rank(); }
  const relation_type& relation() const { return blocks_; }
  const block_type& block(const Key& key) const { return blocks_.at(key); }

 private:
  BlockGrid grid_;
  relation_type blocks_;
};

// The tensor relation of `t` cut into `parts` (equivalent to tiling it along every dimension, TRA §3.1).
// Uncut, the one block shares t's data, as copies of Kokkos views do.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TensorRelation<Scalar, MemorySpace> to_relation(const ExecutionSpace& exec, const Tensor<Scalar, MemorySpace>& t,
                                                const std::vector<Extent>& parts) {
  const BlockGrid grid(t.bound(), parts);
  Relation<Scalar, MemorySpace> blocks(grid.rank());
  if (grid.num_blocks() == 1) {
    blocks.insert(Key(grid.rank(), 0), t);
    return TensorRelation<Scalar, MemorySpace>(t.bound(), parts, std::move(blocks));
  }
  for (Extent id = 0; id < grid.num_blocks(); ++id) {
    const Key key = grid.key(id);
    const Box box = grid.box(key);
    const Bound extent = box.extents();
    const auto block = Tensor<Scalar, MemorySpace>::uninitialized(t.label() + "/block", extent);
    copy_box(exec, t, box.lo, block, std::vector<Extent>(extent.size(), 0), extent);
    blocks.insert(key, block);
  }
  return TensorRelation<Scalar, MemorySpace>(t.bound(), parts, std::move(blocks));
}

// The whole tensor of a tensor relation (equivalent to concatenating along every key dimension). A
// relation of one block returns that block, sharing its data.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> to_tensor(const ExecutionSpace& exec, const TensorRelation<Scalar, MemorySpace>& r,
                                      const std::string& label) {
  if (r.grid().num_blocks() == 1) return r.block(Key(r.rank(), 0));
  const auto t = Tensor<Scalar, MemorySpace>::uninitialized(label, r.bound());
  for (const auto& [key, block] : r.relation())
    copy_box(exec, block, std::vector<Extent>(key.size(), 0), t, r.grid().box(key).lo, block.bound());
  return t;
}

// Repartition Π_d (eindecomp.txt §4.2): the same tensor cut into `parts`. Every new block is assembled
// from its intersections with the old blocks, without materializing the whole tensor.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TensorRelation<Scalar, MemorySpace> repartition(const ExecutionSpace& exec,
                                                const TensorRelation<Scalar, MemorySpace>& r,
                                                const std::vector<Extent>& parts) {
  const BlockGrid target(r.bound(), parts);
  if (target == r.grid()) return r;
  const BlockGrid& source = r.grid();
  Relation<Scalar, MemorySpace> blocks(target.rank());
  for (Extent id = 0; id < target.num_blocks(); ++id) {
    const Key key = target.key(id);
    const Box box = target.box(key);
    const Bound extent = box.extents();
    const auto block = Tensor<Scalar, MemorySpace>::uninitialized("einrel::repartition", extent);
    for_each_overlap(source, box, [&](const Key& s, const Box& piece) {
      std::vector<Extent> src_lo, dst_lo;
      for (int d = 0; d < target.rank(); ++d) {
        src_lo.push_back(piece.lo[d] - source.offset(d, s[d]));
        dst_lo.push_back(piece.lo[d] - box.lo[d]);
      }
      copy_box(exec, r.block(s), src_lo, block, dst_lo, piece.extents());
    });
    blocks.insert(key, block);
  }
  return TensorRelation<Scalar, MemorySpace>(r.bound(), parts, std::move(blocks));
}

}  // namespace einrel

#endif
