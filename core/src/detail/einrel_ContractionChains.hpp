#ifndef EINREL_CONTRACTIONCHAINS_HPP
#define EINREL_CONTRACTIONCHAINS_HPP

#include <einrel_Graph.hpp>

#include <optional>

namespace einrel {

// A graph's explicit chains of binary contractions taken as the n-ary einsums they compute (docs/planner.md
// "Contraction order"): each tree of binary (mul, sum, identity map) einsum vertices whose inner values are
// read once, by the tree, and are no graph output, with 3 to alternative_operands leaves, becomes one n-ary
// einsum of the leaves, named as its root and split in the order of fewest flops; its inner values, which
// nothing outside reads, are the n-ary einsum's. Trees with a sparse, sliced or repeated-label operand, or more
// labels than letters, stay as written. Graph inputs and every vertex outside the trees keep their names (ids
// may shift). Nothing where no tree merges.
//
// Which trees are worth planning again as n-ary einsums (the plan of the merged graph is only kept where it is
// faster): with `every_order`, those with a candidate order (contraction_orders) other than the one written (the
// others' merged graph would be planned to the same plan); with `cheaper_by_flops`, only those whose least-flops
// order needs fewer flops than the one written (a chain written in its cheapest order stays: the planner's
// choice without a memory limit, where the other candidates could only trade flops for memory).
enum class ChainMerge { every_order, cheaper_by_flops };
std::optional<Graph> merge_contraction_chains(const Graph& graph, ChainMerge merge = ChainMerge::every_order);

}  // namespace einrel

#endif
