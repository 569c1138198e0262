#include <einrel_DryRun.hpp>
#include <einrel_Error.hpp>
#include <einrel_MemoryFit.hpp>

#include <algorithm>

namespace einrel::engine {

partition::Plan plan_within_memory(const Graph& graph, int ranks, const PlanRequest& request,
                                   std::optional<std::size_t> memory_limit) {
  partition::Plan requested = partition::make_plan(graph, request.procs, request.planner, request.cost_model);
  if (!memory_limit) return requested;

  struct Estimate {
    std::size_t peak = 0;
    int rank = 0;
    VertexId vertex = 0;
  };
  auto estimate = [&](const partition::Plan& plan) {
    const Traffic dry = dry_run(graph, Schedule(graph, plan.partitions, ranks), request.limits);
    Estimate e;
    for (int r = 0; r < ranks; ++r)
      if (dry.peak_memory_bytes[r] > e.peak) e = {dry.peak_memory_bytes[r], r, dry.peak_vertex[r]};
    return e;
  };
  Estimate closest = estimate(requested);
  if (closest.peak <= *memory_limit) return requested;

  std::vector<std::string> planners{request.planner};
  for (const std::string& name : partition::planner_names())
    if (name != request.planner) planners.push_back(name);
  std::optional<partition::Plan> best;
  partition::Plan closest_plan = requested;
  for (Extent p : {request.procs, 2 * request.procs, 4 * request.procs})
    for (const std::string& planner : planners) {
      if (p == request.procs && planner == request.planner) continue;  // `requested`, which does not fit
      partition::Plan plan = partition::make_plan(graph, p, planner, request.cost_model);
      const Estimate e = estimate(plan);
      if (e.peak <= *memory_limit) {
        if (!best || plan.total_cost < best->total_cost) best = std::move(plan);
      } else if (e.peak < closest.peak) {
        closest = e;
        closest_plan = std::move(plan);
      }
    }
  if (best) return *best;
  throw Error("--memory-limit " + std::to_string(*memory_limit) + ": no plan fits; the closest (" +
              closest_plan.planner + " at p = " + std::to_string(closest_plan.procs) + ") needs " +
              std::to_string(closest.peak) + " bytes on rank " + std::to_string(closest.rank) + " at vertex '" +
              graph.vertex(closest.vertex).name + "', " + std::to_string(closest.peak - *memory_limit) +
              " bytes more than the limit");
}

}  // namespace einrel::engine
