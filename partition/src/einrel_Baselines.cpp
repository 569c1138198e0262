#include <einrel_Baselines.hpp>
#include <einrel_PlanSearch.hpp>
#include <einrel_Viable.hpp>

#include <algorithm>

namespace einrel::partition {
namespace {

// Output labels first, then the aggregated labels, each group in equation order.
std::string output_first(const ResolvedEinSum& e) { return e.einsum().output + e.aggregated_labels(); }

// A vector over the unique labels of `e` built by handing out log2 p doublings one at a time, to the
// labels in the order of `labels`, to pick(exponents, caps), which returns the label to double or -1 when
// it is done.
template <class Pick>
PartitionVector hand_out(const ResolvedEinSum& e, Extent p, const std::string& labels, Pick pick) {
  std::vector<int> caps, exponents(labels.size(), 0);
  for (Extent extent : e.extents(labels)) caps.push_back(floor_log2(extent));
  for (int left = floor_log2(p); left > 0; --left) {
    const int k = pick(exponents, caps);
    if (k < 0) break;
    ++exponents[k];
  }
  // Back to unique-label order, the order every planner uses.
  const std::vector<std::size_t> at = e.positions(labels);
  std::vector<Extent> parts(labels.size());
  for (std::size_t k = 0; k < labels.size(); ++k) parts[at[k]] = Extent{1} << exponents[k];
  return PartitionVector(e.unique_labels(), parts);
}

// Each vertex's labels in the order `order(v, e)` gives, doublings handed out by `pick`.
template <class Order, class Pick>
Partitioning per_vertex(const Graph& graph, Extent p, Order order, Pick pick) {
  check_procs(p);
  Partitioning result;
  result.partitions.resize(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input()) continue;
    const ResolvedEinSum& e = graph.resolved(v);
    result.partitions[v] = hand_out(e, p, order(v, e), pick);
    ++result.partitions_considered;
  }
  return result;
}

std::string output_first_order(VertexId, const ResolvedEinSum& e) { return output_first(e); }

// The first label that can still be cut, in order.
int first_open(const std::vector<int>& exponents, const std::vector<int>& caps) {
  for (std::size_t k = 0; k < exponents.size(); ++k)
    if (exponents[k] < caps[k]) return static_cast<int>(k);
  return -1;
}

// Each vertex's labels of each tier of dimension classes in turn (output first within a tier), then the
// rest, output first; doublings to the first label that can still be cut.
Partitioning by_tiers(const Graph& graph, Extent p, const DimensionClasses& classes,
                      const std::vector<std::vector<int>>& tiers) {
  auto order = [&](VertexId v, const ResolvedEinSum& e) {
    const std::string all = output_first(e);
    std::string labels;
    for (const std::vector<int>& tier : tiers)
      for (char l : all)
        if (std::count(tier.begin(), tier.end(), classes.of_label(graph, v, l)) && labels.find(l) == std::string::npos)
          labels += l;
    for (char l : all)
      if (labels.find(l) == std::string::npos) labels += l;
    return labels;
  };
  return per_vertex(graph, p, order, first_open);
}

// The tiers of each LLM baseline (see Baselines.hpp).
std::vector<std::vector<int>> megatron_tiers(const LayerRoles& r) {
  std::vector<int> split = r.hidden;
  split.insert(split.begin(), r.heads);
  return {split, {r.sequence}};
}
std::vector<std::vector<int>> sequence_tiers(const LayerRoles& r) { return {{r.sequence}, {r.heads}}; }
std::vector<std::vector<int>> attention_tiers(const LayerRoles& r) { return {{r.heads}, {r.sequence}}; }

// by_tiers with the tiers `tiers_of` names from the graph's transformer layer.
Partitioning layer_tiers(const Graph& graph, Extent p, const char* planner,
                         std::vector<std::vector<int>> (*tiers_of)(const LayerRoles&)) {
  const auto roles = layer_roles(graph);
  if (!roles)
    throw Error(std::string("planner '") + planner +
                "' needs a transformer layer: no vertex computes attention scores (an einsum like "
                "\"shd,thd->hst\" of two computed tensors); see docs/planner.md");
  return by_tiers(graph, p, roles->classes, tiers_of(*roles));
}

}  // namespace

Partitioning sqrt_baseline(const Graph& graph, Extent p) {
  return per_vertex(graph, p, output_first_order, [](const std::vector<int>& exponents, const std::vector<int>& caps) {
    int best = -1;
    for (std::size_t k = 0; k < exponents.size(); ++k)
      if (exponents[k] < caps[k] && (best < 0 || exponents[k] < exponents[best])) best = static_cast<int>(k);
    return best;
  });
}

Partitioning data_baseline(const Graph& graph, Extent p) {
  const DimensionClasses classes = dimension_classes(graph);
  for (VertexId v = 0; v < graph.size(); ++v)
    if (!graph.vertex(v).is_input() && !graph.vertex(v).bound.empty())
      return by_tiers(graph, p, classes, {{classes.of[v][0]}});
  return per_vertex(graph, p, output_first_order, first_open);
}

Partitioning megatron_baseline(const Graph& graph, Extent p) {
  return layer_tiers(graph, p, "megatron", megatron_tiers);
}

Partitioning sequence_baseline(const Graph& graph, Extent p) {
  return layer_tiers(graph, p, "sequence", sequence_tiers);
}

Partitioning attention_baseline(const Graph& graph, Extent p) {
  return layer_tiers(graph, p, "attention", attention_tiers);
}

std::vector<Partitioning> llm_baselines(const Graph& graph, Extent p, const LayerRoles& roles) {
  std::vector<Partitioning> plans;
  for (auto tiers_of : {megatron_tiers, sequence_tiers, attention_tiers})
    plans.push_back(by_tiers(graph, p, roles.classes, tiers_of(roles)));
  return plans;
}

Partitioning greedy_baseline(const Graph& graph, Extent p, CostModel model) {
  search::Search s(graph, p, model);
  s.optimize_greedily();
  return {s.partitions(), s.considered()};
}

}  // namespace einrel::partition
