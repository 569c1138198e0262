#include <einrel_Error.hpp>
#include <einrel_SplitLargest.hpp>

#include <map>

namespace einrel::partition {

PartitionVector split_largest(const EinSum& e, const std::vector<Bound>& input_bounds, Extent p) {
  if (!is_power_of_two(p)) throw Error("the number of processors p must be a power of two, got " + std::to_string(p));
  std::map<char, Extent> extent;
  for (std::size_t k = 0; k < e.inputs.size(); ++k)
    for (std::size_t d = 0; d < e.inputs[k].size(); ++d) extent[e.inputs[k][d]] = input_bounds.at(k).at(d);
  const std::string labels = e.unique_labels();
  std::vector<Extent> parts(labels.size(), 1);
  for (Extent product = 1; product < p; product *= 2) {
    int best = -1;
    for (std::size_t k = 0; k < labels.size(); ++k) {
      const Extent n = extent[labels[k]];
      if (2 * parts[k] > n) continue;
      // compare n / parts[k] > n_best / parts[best] without rounding
      if (best < 0 || n * parts[best] > extent[labels[best]] * parts[k]) best = static_cast<int>(k);
    }
    if (best < 0) break;
    parts[best] *= 2;
  }
  return PartitionVector(labels, parts);
}

std::vector<PartitionVector> split_largest(const Graph& graph, Extent p) {
  std::vector<PartitionVector> plan(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    std::vector<Bound> bounds;
    for (VertexId in : vertex.inputs) bounds.push_back(graph.vertex(in).bound);
    plan[v] = split_largest(*vertex.einsum, bounds, p);
  }
  return plan;
}

}  // namespace einrel::partition
