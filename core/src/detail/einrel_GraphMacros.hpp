#ifndef EINREL_GRAPHMACROS_HPP
#define EINREL_GRAPHMACROS_HPP

#include <einrel_Bound.hpp>
#include <einrel_EinSum.hpp>
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
};

// The order in which Graph::einsum decomposes an einsum of three or more operands (docs/graph-format.md): while
// more than two operands remain, join the pair whose intermediate result has the fewest elements (ties:
// the lowest first index, then the lowest second); the intermediate keeps, in order of first appearance,
// the labels of the pair that the output or another remaining operand still needs, so every other label
// is aggregated as early as possible. The last step joins the final two into the output labels.
// The extents are those of `resolved` (resolve(e, bounds) with bounds[k] the bound of operand k).
std::vector<NaryStep> greedy_pairwise_order(const ResolvedEinSum& resolved);

// True when an einsum with these ops may be computed pairwise: ⊗ must distribute over ⊕ and be
// associative, which holds for (mul, sum), (add, max) and (add, min), with no map.
bool decomposes_pairwise(const EinSum& e);

}  // namespace einrel

#endif
