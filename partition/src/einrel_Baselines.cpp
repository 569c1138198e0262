#include <einrel_Baselines.hpp>
#include <einrel_PlanSearch.hpp>
#include <einrel_Viable.hpp>

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

template <class Pick>
Partitioning per_vertex(const Graph& graph, Extent p, Pick pick) {
  check_procs(p);
  Partitioning result;
  result.partitions.resize(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input()) continue;
    const ResolvedEinSum& e = graph.resolved(v);
    result.partitions[v] = hand_out(e, p, output_first(e), pick);
    ++result.partitions_considered;
  }
  return result;
}

}  // namespace

Partitioning sqrt_baseline(const Graph& graph, Extent p) {
  return per_vertex(graph, p, [](const std::vector<int>& exponents, const std::vector<int>& caps) {
    int best = -1;
    for (std::size_t k = 0; k < exponents.size(); ++k)
      if (exponents[k] < caps[k] && (best < 0 || exponents[k] < exponents[best])) best = static_cast<int>(k);
    return best;
  });
}

Partitioning data_baseline(const Graph& graph, Extent p) {
  return per_vertex(graph, p, [](const std::vector<int>& exponents, const std::vector<int>& caps) {
    for (std::size_t k = 0; k < exponents.size(); ++k)
      if (exponents[k] < caps[k]) return static_cast<int>(k);
    return -1;
  });
}

Partitioning greedy_baseline(const Graph& graph, Extent p, CostModel model) {
  search::Search s(graph, p, model);
  s.optimize_greedily();
  return {s.partitions(), s.considered()};
}

}  // namespace einrel::partition
