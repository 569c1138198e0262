#ifndef EINREL_CARRIED_HPP
#define EINREL_CARRIED_HPP

#include <einrel_Planner.hpp>

#include <utility>
#include <vector>

namespace einrel::partition {

// Loop-carried values of a graph run again and again (a training step, docs/training.md): each pair
// (input W, vertex W') says that W' is fed back as W, so W lives where W' is produced and W's readers move
// it from W''s partition like any operand (no longer the free edge of a graph input).
using Carried = std::vector<std::pair<VertexId, VertexId>>;

// The repartition floats per execution that the carried edges cost under `partitions`: for each pair, from
// W''s output partition to what each reader of W needs (repartition_cost under `model`).
double carried_cost(const Graph& graph, const std::vector<PartitionVector>& partitions, const Carried& carried,
                    CostModel model);

// Re-chooses each W''s partition vector among its viable ones for the least sum of its own cost (join,
// aggregation, its operands' repartitions) and its carried edges, the other vectors fixed; recosts the plan.
// The other vertices were planned with W's edges free, so this is one local improvement step, not a joint
// optimum (docs/training.md).
void plan_carried(const Graph& graph, Plan& plan, const Carried& carried);

}  // namespace einrel::partition

#endif
