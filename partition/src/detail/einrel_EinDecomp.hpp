#ifndef EINREL_EINDECOMP_HPP
#define EINREL_EINDECOMP_HPP

#include <einrel_Planner.hpp>
#include <einrel_VertexMemory.hpp>

#include <optional>

namespace einrel::partition {

// True when no EinSum vertex feeds more than one operand (counting a vertex read twice by one consumer
// twice): the dynamic program of eindecomp.txt §8.2 is then exact.
bool is_tree_shaped(const Graph& graph);

// The dynamic program of eindecomp.txt §8.2–8.3 over the topological order, back-tracked from the best
// entry of every sink: the plan of least evaluate_cost total under `model`. Throws Error unless is_tree_shaped(graph).
Partitioning eindecomp_tree(const Graph& graph, Extent p, CostModel model);

// The linearization of eindecomp.txt §8.4 for any DAG (docs/planner.md): repeatedly the longest path of
// unplanned vertices is optimized by the dynamic program and fixed. Edges to vertices fixed earlier are
// costed exactly, edges to vertices planned later are left to them. With `refine`, sweeps then re-choose
// each vertex's vector against its fixed neighbours while the total cost strictly falls.
Partitioning eindecomp_linearized(const Graph& graph, Extent p, CostModel model, bool refine);

// The "eindecomp" planner: eindecomp_tree on tree-shaped graphs, else eindecomp_linearized with refinement.
// This proposes; the plan that runs is chosen among this one and other candidates (the paper model's, the
// baselines', finer and shape-aligned cuts) by the engine's dry run on the ranks it will run on:
// engine::choose_plan in engine/src/detail/einrel_PlanChoice.hpp.
Partitioning eindecomp(const Graph& graph, Extent p, CostModel model);

// The same search under a memory budget (docs/planner.md "Memory-constrained search"): each step of the dynamic
// program leaves out the candidates whose vertex would hold more than the budget on the busiest rank by the
// memory model (VertexMemory), and its entries carry the peak of their subproblem; nothing when some vertex has
// no candidate within the budget. On a tree the plan of least cost among those within the budget; elsewhere the
// refined linearization or the refined greedy plan, whichever costs less.
std::optional<Partitioning> eindecomp_within(const Graph& graph, Extent p, CostModel model, const MemoryBudget& budget);

// The largest bytes a rank holds at any vertex of `partitions` (viable at p) by that search's memory model.
// Throws Error for a vector that is not viable at p.
double memory_model_peak(const Graph& graph, const std::vector<PartitionVector>& partitions, Extent p, CostModel model,
                         const MemoryBudget& budget);

}  // namespace einrel::partition

#endif
