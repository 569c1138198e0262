#include <einrel_Baselines.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_Error.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Viable.hpp>

namespace einrel::partition {
namespace {

using PlannerFunction = Partitioning (*)(const Graph&, Extent, CostModel);

struct NamedPlanner {
  const char* name;
  PlannerFunction plan;
};

// sqrt and data follow fixed rules: no cost model.
constexpr NamedPlanner planners[] = {{"eindecomp", eindecomp},
                                     {"sqrt", [](const Graph& g, Extent p, CostModel) { return sqrt_baseline(g, p); }},
                                     {"data", [](const Graph& g, Extent p, CostModel) { return data_baseline(g, p); }},
                                     {"greedy", greedy_baseline}};

}  // namespace

std::vector<std::string> planner_names() {
  std::vector<std::string> names;
  for (const NamedPlanner& p : planners) names.emplace_back(p.name);
  return names;
}

Plan make_plan(const Graph& graph, Extent p, const std::string& planner, CostModel model) {
  check_procs(p);
  for (const NamedPlanner& named : planners) {
    if (planner != named.name) continue;
    Partitioning chosen = named.plan(graph, p, model);
    Plan plan{planner, model, p, std::move(chosen.partitions), {}, 0, chosen.partitions_considered};
    plan.costs = evaluate_cost(graph, plan.partitions, model);
    for (const VertexCost& c : plan.costs) plan.total_cost += c.total();
    return plan;
  }
  std::string choices;
  for (const std::string& name : planner_names()) choices += (choices.empty() ? "" : ", ") + name;
  throw Error("unknown planner '" + planner + "' (available: " + choices + ")");
}

Extent procs_for_ranks(Extent ranks) {
  Extent p = 1;
  while (p < ranks) p *= 2;
  return p;
}

}  // namespace einrel::partition
