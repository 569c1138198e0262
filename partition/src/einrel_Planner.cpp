#include <einrel_Baselines.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_Error.hpp>
#include <einrel_LayerRoles.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Viable.hpp>

namespace einrel::partition {
namespace {

using PlannerFunction = Partitioning (*)(const Graph&, Extent, CostModel);

struct NamedPlanner {
  const char* name;
  PlannerFunction plan;
  bool needs_layer;  // only for graphs with a transformer layer (layer_roles)
};

// sqrt, data and the LLM baselines follow fixed rules: no cost model.
constexpr NamedPlanner planners[] = {
    {"eindecomp", eindecomp, false},
    {"sqrt", [](const Graph& g, Extent p, CostModel) { return sqrt_baseline(g, p); }, false},
    {"data", [](const Graph& g, Extent p, CostModel) { return data_baseline(g, p); }, false},
    {"greedy", greedy_baseline, false},
    {"megatron", [](const Graph& g, Extent p, CostModel) { return megatron_baseline(g, p); }, true},
    {"sequence", [](const Graph& g, Extent p, CostModel) { return sequence_baseline(g, p); }, true},
    {"attention", [](const Graph& g, Extent p, CostModel) { return attention_baseline(g, p); }, true}};

}  // namespace

std::vector<std::string> planner_names() {
  std::vector<std::string> names;
  for (const NamedPlanner& p : planners) names.emplace_back(p.name);
  return names;
}

std::vector<std::string> planners_for(const Graph& graph) {
  const bool layer = layer_roles(graph).has_value();
  std::vector<std::string> names;
  for (const NamedPlanner& p : planners)
    if (layer || !p.needs_layer) names.emplace_back(p.name);
  return names;
}

Plan make_plan(const Graph& graph, Extent p, const std::string& planner, CostModel model) {
  check_procs(p);
  for (const NamedPlanner& named : planners) {
    if (planner != named.name) continue;
    Partitioning chosen = named.plan(graph, p, model);
    Plan plan{planner, model, p, std::move(chosen.partitions), {}, 0, chosen.partitions_considered};
    cost_plan(graph, plan);
    return plan;
  }
  std::string choices;
  for (const std::string& name : planner_names()) choices += (choices.empty() ? "" : ", ") + name;
  throw Error("unknown planner '" + planner + "' (available: " + choices + ")");
}

void cost_plan(const Graph& graph, Plan& plan) {
  plan.costs = evaluate_cost(graph, plan.partitions, plan.cost_model);
  plan.total_cost = 0;
  for (const VertexCost& c : plan.costs) plan.total_cost += c.total();
}

Extent procs_for_ranks(Extent ranks) {
  check_procs(ranks);
  return ranks;
}

}  // namespace einrel::partition
