#ifndef EINREL_PLANNER_HPP
#define EINREL_PLANNER_HPP

#include <einrel_CostModel.hpp>
#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace einrel::partition {

// What a planner chooses: one partition vector per vertex (empty for inputs), and how many candidate
// partition vectors it costed on the way.
struct Partitioning {
  std::vector<PartitionVector> partitions;
  std::size_t partitions_considered = 0;
};

// A plan costed by evaluate_cost, the same model for every planner.
struct Plan {
  std::string planner;
  CostModel cost_model = CostModel::engine;
  Extent procs = 1;
  std::vector<PartitionVector> partitions;  // per vertex, empty for inputs
  std::vector<VertexCost> costs;            // per vertex, zero for inputs
  double total_cost = 0;                    // Σ over vertices of join + agg + repartition, in floats
  std::size_t partitions_considered = 0;
};

// "eindecomp" (the default), then the baselines "sqrt", "data", "greedy", and the LLM baselines "megatron",
// "sequence", "attention" (docs/planner.md defines each).
std::vector<std::string> planner_names();

// The planners that apply to `graph`: all of planner_names(), less the LLM baselines when the graph holds no
// transformer layer (partition::layer_roles).
std::vector<std::string> planners_for(const Graph& graph);

// Plans `graph` for p processors with the named planner, which minimises (and the plan is costed by) `model`.
// Throws Error naming the valid choices for an unknown planner, or for p outside 1..2^40 (check_procs).
Plan make_plan(const Graph& graph, Extent p, const std::string& planner, CostModel model = CostModel::engine);

// Sets plan.costs and plan.total_cost from plan.partitions by evaluate_cost under plan.cost_model.
void cost_plan(const Graph& graph, Plan& plan);

// The default p for `ranks` MPI ranks: p = R, one join tuple per rank whatever R (partition vectors multiply to
// any p, e.g. {i:3,j:2} at R = 6). Throws Error unless 1 <= ranks <= 2^40.
Extent procs_for_ranks(Extent ranks);

}  // namespace einrel::partition

#endif
