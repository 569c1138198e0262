#ifndef EINREL_PLANEXPORT_HPP
#define EINREL_PLANEXPORT_HPP

#include <einrel_Json.hpp>
#include <einrel_PlanChoice.hpp>

#include <string>

// How `einrel plan` prints a plan (docs/cli.md).
namespace einrel::cli {

// A table: per EinSum vertex its equation, shape, partition vector and costs, then the total.
std::string plan_text(const Graph& graph, const engine::FittedPlan& fitted);

// "p = 4", with the reason where p is not the ranks' count: "p = 4 (set by --procs)" (FittedPlan::procs_reason).
std::string procs_text(Extent procs, const std::string& reason);

// The plan's members of a JSON report, written into the open object `j`: "procs", "planner", "cost_model",
// "total_cost", "partitions_considered", "nodes": [{"name", "equation", "inputs", "shape",
// "partition": {label: parts}, "cost": {"join", "agg", "repartition"}}]; costs in floats, every digit.
void write_plan(io::JsonWriter& j, const Graph& graph, const engine::FittedPlan& fitted);

// The plan alone as a JSON report (schema_version, then write_plan's members).
std::string plan_json(const Graph& graph, const engine::FittedPlan& fitted);

// Graphviz: every vertex with its partition vector and costs; every edge with the blocks its consumer reads
// and, in red, the producer's blocks and the repartition cost where they differ (edges from graph inputs
// are dashed: inputs are placed as read). `dot -Tpng` draws it.
std::string plan_dot(const Graph& graph, const engine::FittedPlan& fitted);

}  // namespace einrel::cli

#endif
