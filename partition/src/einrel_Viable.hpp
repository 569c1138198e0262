#ifndef EINREL_VIABLE_HPP
#define EINREL_VIABLE_HPP

#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>

#include <vector>

namespace einrel::partition {

// The extent of each label of `labels`, looked up in the operands of `e` (bounds in operand order).
std::vector<Extent> label_extents(const EinSum& e, const std::vector<Bound>& input_bounds, const std::string& labels);

// The bounds of the operands of EinSum vertex v, in equation order.
std::vector<Bound> operand_bounds(const Graph& graph, VertexId v);

// viable(e, p) of eindecomp.txt §8.1 and §8.3 as DESIGN.md §5 states it: every partition vector over the
// unique labels of `e` with power-of-two parts, no label cut into more parts than its extent, and product
// exactly p; when the extents cannot reach p, the vectors with the largest product below p (then exactly
// one: every label at its largest power of two). Order: lexicographic over the unique labels, the first
// label's parts largest first. Throws Error unless p is a power of two.
std::vector<PartitionVector> viable(const EinSum& e, const std::vector<Bound>& input_bounds, Extent p);

// Throws Error naming the valid choices unless p is a power of two.
void check_procs(Extent p);

// The largest k with 2^k <= n (n >= 1): log2 of the largest power of two a label of extent n can be cut into.
int floor_log2(Extent n);

}  // namespace einrel::partition

#endif
