#ifndef EINREL_PLANEXPORT_HPP
#define EINREL_PLANEXPORT_HPP

#include <einrel_Planner.hpp>

#include <string>
#include <vector>

// How `einrel plan` prints a plan (DESIGN.md §4.2, docs/cli.md).
namespace einrel::partition {

// The version of every JSON einrel writes (`einrel plan --format json`, `einrel run --report`), bumped
// when a field changes meaning or is removed. 2: the run report's `ranks` became the per-rank list (the
// count is `num_ranks`), and the plan may carry the dry run's `ranks`.
constexpr int json_schema_version = 2;

// A table: per EinSum vertex its equation, shape, partition vector and costs, then the total.
std::string plan_text(const Graph& graph, const Plan& plan);

// {"procs", "planner", "total_cost", "partitions_considered", "nodes": [{"name", "equation", "inputs",
// "shape", "partition": {label: parts}, "cost": {"join", "agg", "repartition"}}]}; costs in floats with
// full double precision.
// `extra` holds further members, each "\"name\": value" in JSON, written after the plan's own (the
// engine's dry run adds its per-rank list this way).
std::string plan_json(const Graph& graph, const Plan& plan, const std::vector<std::string>& extra = {});

// Graphviz: every vertex with its partition vector and costs; every edge with the blocks its consumer reads
// and, in red, the producer's blocks and the repartition cost where they differ (edges from graph inputs
// are dashed: inputs are placed as read). `dot -Tpng` draws it.
std::string plan_dot(const Graph& graph, const Plan& plan);

}  // namespace einrel::partition

#endif
