#ifndef EINREL_SPLITLARGEST_HPP
#define EINREL_SPLITLARGEST_HPP

#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>

#include <vector>

namespace einrel::partition {

// A simple, cost-blind partitioning: start from one part per label and, until the product reaches p
// (a power of two), double the parts of the label whose blocks are currently longest (largest
// extent / parts; ties: first in unique-label order), never cutting a label into more parts than its
// extent. When no label can be cut further the product stays below p.
PartitionVector split_largest(const EinSum& e, const std::vector<Bound>& input_bounds, Extent p);

// split_largest for every EinSum vertex of `graph`; input vertices get an empty vector.
std::vector<PartitionVector> split_largest(const Graph& graph, Extent p);

}  // namespace einrel::partition

#endif
