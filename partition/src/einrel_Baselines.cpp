#include <einrel_Baselines.hpp>
#include <einrel_PlanSearch.hpp>
#include <einrel_Viable.hpp>

namespace einrel::partition {
namespace {

// Output labels first, then the aggregated labels, each group in equation order.
std::string output_first(const EinSum& e) { return e.output + e.aggregated_labels(); }

// A vector over `labels` built by handing out log2 p doublings one at a time to pick(exponents, caps),
// which returns the label to double or -1 when it is done.
template <class Pick>
PartitionVector hand_out(const EinSum& e, const std::vector<Bound>& bounds, Extent p, const std::string& labels,
                         Pick pick) {
  std::vector<int> caps, exponents(labels.size(), 0);
  for (Extent extent : label_extents(e, bounds, labels)) caps.push_back(floor_log2(extent));
  for (int left = floor_log2(p); left > 0; --left) {
    const int k = pick(exponents, caps);
    if (k < 0) break;
    ++exponents[k];
  }
  std::vector<Extent> parts;
  for (int x : exponents) parts.push_back(Extent{1} << x);
  // Back to unique-label order, the order every planner uses.
  const std::string unique = e.unique_labels();
  std::vector<Extent> ordered;
  for (char c : unique) ordered.push_back(parts[labels.find(c)]);
  return PartitionVector(unique, ordered);
}

template <class Pick>
Partitioning per_vertex(const Graph& graph, Extent p, Pick pick) {
  check_procs(p);
  Partitioning result;
  result.partitions.resize(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    result.partitions[v] = hand_out(*vertex.einsum, operand_bounds(graph, v), p, output_first(*vertex.einsum), pick);
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

Partitioning greedy_baseline(const Graph& graph, Extent p) {
  search::Search s(graph, p);
  s.optimize_greedily();
  return {s.partitions(), s.considered()};
}

}  // namespace einrel::partition
