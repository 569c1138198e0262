#include <einrel_Baselines.hpp>
#include <einrel_PlanSearch.hpp>
#include <einrel_Viable.hpp>

#include <algorithm>
#include <map>

namespace einrel::partition {
namespace {

// Output labels first, then the aggregated labels, each group in equation order.
std::string output_first(const ResolvedEinSum& e) { return e.einsum().output + e.aggregated_labels(); }

// A vector over the unique labels of `e` built by handing out the prime factors of its viable product
// (reachable_procs: p unless the extents are too small) one at a time, largest first (log2 p doublings for a
// power of two), to the labels in the order of `labels`: pick(parts, open) returns the label to cut f times
// more among those open[k] marks. A label is open when its extent allows the cut and the factors left can
// still be placed after it, so the vector is always one of viable(e, p).
template <class Pick>
PartitionVector hand_out(const ResolvedEinSum& e, Extent p, const std::string& labels, Pick pick) {
  const std::vector<Extent> extents = e.extents(labels);
  std::vector<Extent> parts(labels.size(), 1);
  Extent left = reachable_procs(extents, p);
  const std::vector<Extent> factors = prime_factors(left);
  for (auto f_at = factors.rbegin(); f_at != factors.rend(); ++f_at) {  // largest first
    const Extent f = *f_at;
    left /= f;
    std::vector<bool> open(labels.size());
    for (std::size_t k = 0; k < labels.size(); ++k) {
      if (parts[k] * f > extents[k]) continue;
      std::vector<Extent> room(labels.size());  // how many times more each label can still be cut
      for (std::size_t j = 0; j < labels.size(); ++j) room[j] = extents[j] / (parts[j] * (j == k ? f : 1));
      open[k] = reachable_procs(room, left) == left;
    }
    parts[pick(parts, open)] *= f;
  }
  // Back to unique-label order, the order every planner uses.
  const std::vector<std::size_t> at = e.positions(labels);
  std::vector<Extent> ordered(labels.size());
  for (std::size_t k = 0; k < labels.size(); ++k) ordered[at[k]] = parts[k];
  return PartitionVector(e.unique_labels(), ordered);
}

// Each vertex's labels in the order `order(v, e)` gives, doublings handed out by `pick`: found once for
// vertices with equal EinSums and operand bounds that order their labels alike.
template <class Order, class Pick>
Partitioning per_vertex(const Graph& graph, Extent p, Order order, Pick pick) {
  check_procs(p);
  Partitioning result;
  result.partitions.resize(graph.size());
  const std::vector<VertexId> first = first_of_equal_einsums(graph);
  std::map<std::pair<VertexId, std::string>, VertexId> handed;  // (first of its kind, order) -> a vertex cut so
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input()) continue;
    const ResolvedEinSum& e = graph.resolved(v);
    std::string labels = order(v, e);
    const auto [known, fresh] = handed.try_emplace({first[v], std::move(labels)}, v);
    result.partitions[v] = fresh ? hand_out(e, p, known->first.second, pick) : result.partitions[known->second];
    ++result.partitions_considered;
  }
  return result;
}

std::string output_first_order(VertexId, const ResolvedEinSum& e) { return output_first(e); }

// The first open label, in order.
std::size_t first_open(const std::vector<Extent>&, const std::vector<bool>& open) {
  return static_cast<std::size_t>(std::find(open.begin(), open.end(), true) - open.begin());
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
  return per_vertex(graph, p, output_first_order, [](const std::vector<Extent>& parts, const std::vector<bool>& open) {
    std::size_t best = parts.size();  // the least-cut open label, the first of equals
    for (std::size_t k = 0; k < parts.size(); ++k)
      if (open[k] && (best == parts.size() || parts[k] < parts[best])) best = k;
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
