#ifndef EINREL_SLICEDPARTITIONS_HPP
#define EINREL_SLICEDPARTITIONS_HPP

#include <einrel_Planner.hpp>
#include <einrel_Slicing.hpp>

namespace einrel::partition {

// `plan` (of the original graph) carried over to `sliced` (core's slice_graph): a copy of a region vertex cuts
// its sliced label `passes` times as finely as the original, so that each pass runs as many join tuples as the
// original vertex did (where those parts do not cut a chunk evenly, the most parts below them that do: blocks
// must not straddle the passes' chunks); a combining vertex cuts its value as the vertex whose value it
// combines did; every other vertex as before. Costed under plan.cost_model on the sliced graph.
Plan sliced_plan(const SlicedGraph& sliced, const Plan& plan);

}  // namespace einrel::partition

#endif
