#ifndef EINREL_BASELINES_HPP
#define EINREL_BASELINES_HPP

#include <einrel_Planner.hpp>

// The baseline planners EinDecomp is compared with (DESIGN.md §5, docs/planner.md). Each gives every
// EinSum vertex a vector of viable(v, p): product p, or the fallback when the extents cannot reach p.
namespace einrel::partition {

// "sqrt" (the paper's SQRT): the log2 p doublings go round-robin to the label with the fewest parts
// (output labels before aggregated ones, then equation order) while its extent allows, whatever the
// extents: a matrix product gets √p × √p output blocks at p = 4 and the 3D algorithm at p = 8 or 64.
Partitioning sqrt_baseline(const Graph& graph, Extent p);

// "data" (data parallelism): the first output label takes as many doublings as its extent allows, then the
// next output label, then the aggregated labels.
Partitioning data_baseline(const Graph& graph, Extent p);

// "greedy" (DTensor-like per-operator choice): in topological order each vertex takes its cheapest viable
// vector (join + agg + repartition from its producers' chosen partitions), ignoring its consumers.
Partitioning greedy_baseline(const Graph& graph, Extent p, CostModel model);

}  // namespace einrel::partition

#endif
