#ifndef EINREL_CONTRACTIONORDER_HPP
#define EINREL_CONTRACTIONORDER_HPP

#include <einrel_ResolvedEinSum.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace einrel {

// One step of an n-ary einsum's decomposition: operands `first` < `second` of the current list become
// one binary einsum whose result, with `labels`, takes the place of `first` (`second` is removed).
struct NaryStep {
  std::size_t first = 0, second = 0;
  std::string labels;
  friend bool operator==(const NaryStep& a, const NaryStep& b) {
    return a.first == b.first && a.second == b.second && a.labels == b.labels;
  }
};

// How an n-ary einsum is computed pairwise, and what that costs.
struct ContractionOrder {
  // Every step's intermediate keeps, in order of first appearance in the pair, the labels that the output
  // or another remaining operand still needs, so every other label is aggregated as early as possible;
  // the last step's result has the output's labels.
  std::vector<NaryStep> steps;
  // Flops counted as opt_einsum counts them (its helpers.flop_count): per step, the product of the
  // extents of every label of the pair, twice that where the step aggregates a label.
  double flops = 0;
  // Elements of the largest intermediate (the output not counted).
  double largest_intermediate = 0;
  // "exhaustive", "dp" or "greedy" (below); "combo" or "size" for contraction_orders' alternatives.
  std::string method;
};

// The order in which Graph::einsum decomposes an einsum of three or more operands (docs/graph-format.md),
// the one of fewest flops its search finds:
//  * up to exhaustive_operands operands, the fewest flops over every pairwise order (a dynamic program
//    over all splits of every subset of operands, outer products included, so it is exact; 3^n splits,
//    ~8 ms at 14 operands);
//  * up to dp_operands, the same over the orders that join only operands sharing a label, each connected
//    group of operands by itself, then the groups' results smallest first (opt_einsum's "dp" searches
//    the same orders; ~16-36 ms at 16 operands, where every split would take ~65 ms);
//  * beyond, or with more than 64 labels, greedily: the pair sharing a label whose result removes the
//    most elements (its size less its operands'), then disconnected results smallest first.
// Among orders of equal flops the search keeps the first it finds. The extents are those of `resolved`.
inline constexpr std::size_t exhaustive_operands = 14, dp_operands = 16;
ContractionOrder contraction_order(const ResolvedEinSum& resolved);

// The orders the planner weighs for an n-ary einsum (docs/planner.md "Contraction order"): contraction_order's
// first; then, up to alternative_operands operands, the exact searches of least flops + 64 × the elements of the
// intermediates written ("combo", opt_einsum's combination) and of least elements written, flops breaking ties
// ("size"), each where it differs from those before. The planner plans each and keeps the one its objective
// prefers, so the order is chosen with the partitions.
inline constexpr std::size_t alternative_operands = 12;
std::vector<ContractionOrder> contraction_orders(const ResolvedEinSum& resolved);

// The greedy order above at any operand count (what contraction_order does beyond dp_operands).
ContractionOrder greedy_contraction_order(const ResolvedEinSum& resolved);

// The flops and largest intermediate of `steps` for `resolved`, counted as ContractionOrder counts them.
ContractionOrder costed_order(const ResolvedEinSum& resolved, std::vector<NaryStep> steps);

}  // namespace einrel

#endif
