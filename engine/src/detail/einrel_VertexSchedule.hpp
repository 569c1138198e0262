#ifndef EINREL_VERTEXSCHEDULE_HPP
#define EINREL_VERTEXSCHEDULE_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_Graph.hpp>
#include <einrel_MachineModel.hpp>
#include <einrel_PartitionVector.hpp>

#include <optional>
#include <string>
#include <vector>

namespace einrel::engine {

// How one EinSum vertex with partition vector d runs on R ranks (docs/engine.md; TRA paper §4: a shuffle
// of each operand to the sites of its join tuples, local joins, local aggregation, then a shuffle of the
// partial results to the owner of each output block). Pure: fixed by the vertex, d and R alone.
//
// Join tuples (eindecomp.txt §4.3: one kernel call per key of the unique labels) are numbered in C order
// over the output labels in `output_order` (a permutation of the output labels; the equation's order by
// default), then the aggregated labels, so the n_agg tuples that aggregate into one output block are
// consecutive. Tuples are spread evenly in that order: tuple t runs on rank floor(t·R/J) (a sparse vertex
// spreads the tuples that run by their flops, docs/sparse.md). Output block g is owned by the rank of its
// first tuple, floor(q·R/G) with q its position in C order over `output_order`:
// in the equation's order the output layout is Placement::spread over its grid. Schedule chooses the order
// so that a reader cutting the value the same way finds each block on the rank of its first tuple reading
// it (tuple_orders, docs/engine.md "Tuple order").
class VertexSchedule {
 public:
  // Throws Error unless `output_order` is empty (the equation's order) or a permutation of the output labels.
  // `operand_shapes` (one per operand, null for a dense one; none at all for a dense vertex) are the shapes
  // of the operands' values when the vertex keeps sparsity (sparse_rule, docs/sparse.md): only the join tuples
  // whose operand blocks are all present (the intersection), or, for the union of sparse operands, those with
  // any present, run, spread over the ranks so that each rank gets an even share of their flops (not of their
  // number), in the same order; an output block no tuple feeds is absent, and an operand block no tuple reads
  // has no site (one a running tuple reads where its value's block is absent is received as zeros). A sliced vertex
  // (Vertex::slice) runs the tuples of its pass alone, the same way; throws Error unless d cuts the label along the
  // passes' chunks. With `screen` > 0, a contraction (join mul, agg sum, no map) of two operands whose shapes bound
  // their blocks' norms skips the tuples whose operand norm bounds multiply to less than `screen`, and drops the output
  // blocks whose remaining products' bounds sum to less (docs/sparse.md "Screening by norms"); its output shape bounds
  // its blocks' norms by those sums.
  VertexSchedule(const Vertex& vertex, const partition::PartitionVector& d, int ranks,
                 const std::string& output_order = {}, const std::vector<const BlockShape*>& operand_shapes = {},
                 double screen = 0, const MachineModel* model = nullptr);
  // An element-wise vertex whose operands are partial results laid out as `partials` (one summand per site
  // of each block): one tuple per block on each of its sites, combining the rank's summands with the join
  // (Schedule::on_partials); operands and output in `partials`, whatever the vertex's partition vector.
  VertexSchedule(const Vertex& vertex, const redistribute::BlockLayout& partials);

  int ranks() const { return ranks_; }
  // The join tuples of d (present or not), and n_agg, the tuples per output block.
  Extent num_tuples() const { return num_tuples_; }
  Extent group_size() const { return group_size_; }
  // Whether only some tuples run (a sparse or sliced vertex), and which: increasing.
  bool sparse() const { return present_.has_value(); }
  const std::vector<Extent>& present_tuples() const { return *present_; }
  // The rank running tuple t (a present one).
  int tuple_rank(Extent t) const;
  // This rank's tuples, increasing.
  std::vector<Extent> tuples_of(int rank) const;
  void tuples_of(int rank, std::vector<Extent>& tuples) const;  // into `tuples`, reusing its storage
  // The output block tuple t feeds, and the first running tuple feeding block g (of a present block).
  Extent output_block(Extent t) const { return block_of(output_digits_, t); }
  Extent first_tuple(Extent g) const;
  // The output's shape for a sparse vertex: the blocks some running tuple feeds (with norm bounds where it
  // screened).
  std::optional<BlockShape> output_shape() const;
  // The block products screened out and the output blocks truncated by norms (the constructor's `screen`).
  Extent screened_products() const { return screened_; }
  Extent truncated_blocks() const { return truncated_; }
  // The block of operand k that tuple t reads (a block id of operand_layout(k)'s grid).
  Extent operand_block(std::size_t k, Extent t) const;
  // Operand k cut by d[l_k], each block on the ranks of the tuples that read it.
  const redistribute::BlockLayout& operand_layout(std::size_t k) const { return operand_layouts_[k]; }
  // The output cut by d[l_z], spread in C order (block g on the rank of its first tuple).
  const redistribute::BlockLayout& output_layout() const { return *output_layout_; }
  // The ranks holding a partial result of output block g, increasing; the first is its owner.
  std::vector<int> contributors(Extent g) const;
  void contributors(Extent g, std::vector<int>& ranks) const;  // into `ranks`, reusing its storage
  // Whether the vertex runs on partial results (the second constructor).
  bool on_partials() const { return partials_.has_value(); }
  // The output cut by d[l_z], block g on its contributors: where the partial results lie before reduction.
  redistribute::BlockLayout partial_layout() const;
  // The bounds of the operand blocks tuple t reads, in operand order: what its kernel call is resolved
  // against.
  std::vector<Bound> tuple_bounds(Extent t) const;
  void tuple_bounds(Extent t, std::vector<Bound>& bounds) const;  // into `bounds`, reusing its storage

 private:
  // The block id, in C order over a tensor's labels, whose key takes t's digits at `digits` (one per dimension).
  Extent block_of(const std::vector<int>& digits, Extent t) const;
  // The first of the n_agg consecutive tuples feeding block g, running or not.
  Extent group_start(Extent g) const;
  // The running tuples of a sparse or sliced vertex and their ranks, by flops (the sparse constructor's part).
  void keep_present_tuples(const Vertex& vertex, const std::string& tuple_labels,
                           const std::vector<const BlockShape*>& operand_shapes, double screen,
                           const MachineModel* model);
  // present_rank_: the running tuples spread over the ranks in order, each an even share of their flops; under
  // `model`, a share ends at an output block's edge where that costs less than sending a partial block.
  void spread_present_tuples(const ResolvedEinSum& resolved, const std::string& tuple_labels, Dtype dtype,
                             const MachineModel* model);
  // Of present_, drops the tuples screened by the operands' norm bounds `a` and `b` (on the operands' grids)
  // and those of truncated output blocks; sets output_norms_.
  void screen_by_norms(const BlockShape& a, const BlockShape& b, double screen);
  // Index of tuple t in present_tuples(); throws Error for a tuple that does not run.
  std::size_t present_index(Extent t) const;

  int ranks_;
  Extent num_tuples_ = 1, group_size_ = 1;
  std::vector<Extent> tuple_parts_;               // parts of d per tuple label (output, then aggregated)
  std::vector<Extent> tuple_strides_;             // C-order strides of the tuple numbering
  std::vector<std::vector<int>> operand_digits_;  // per operand dimension, its tuple label's position
  std::vector<int> output_digits_;                // per output dimension, its tuple label's position
  std::vector<redistribute::BlockLayout> operand_layouts_;
  std::optional<redistribute::BlockLayout> output_layout_;
  std::optional<redistribute::BlockLayout> partials_;  // set for a vertex on partial results
  std::optional<std::vector<Extent>> present_;         // a sparse vertex's running tuples
  std::vector<int> present_rank_;                      // and the rank of each
  Extent output_layout_grid_blocks_ = 0;               // the output blocks of d
  Extent screened_ = 0, truncated_ = 0;
  std::vector<double> output_norms_;  // per output block, the bound of its norm where the vertex screened
};

// Each EinSum vertex's output order (VertexSchedule) under `partitions`: the order in which its first reader
// that cuts it the same way numbers its labels, so the reader's first tuple reading each block runs on the rank
// holding it (a transposing reader such as `ji,jk->ik` after `ij->ji` otherwise moves blocks its partition
// keeps); the equation's order when no reader cuts it the same way. Readers are decided first (last vertex
// back). One string per vertex, empty for inputs.
std::vector<std::string> tuple_orders(const Graph& graph, const std::vector<partition::PartitionVector>& partitions);

}  // namespace einrel::engine

#endif
