#include <einrel_ShapeAligned.hpp>

#include <algorithm>
#include <optional>

namespace einrel::partition {

bool has_block_shapes(const Graph& graph) {
  return std::any_of(graph.vertices().begin(), graph.vertices().end(),
                     [](const Vertex& v) { return v.is_input() && v.shape.has_value(); });
}

std::vector<PartitionVector> shape_aligned(const Graph& graph, const std::vector<PartitionVector>& partitions,
                                           Extent coarsen, Extent refine) {
  std::vector<PartitionVector> aligned = partitions;
  std::vector<std::optional<std::vector<Extent>>> cuts(graph.size());  // per sparse value, its parts
  std::vector<bool> finer(graph.size(), false);  // cut finer than the shapes, here or by an operand
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) {
      if (vertex.shape) {
        std::vector<Extent> parts;
        for (Extent n : vertex.shape->grid().parts()) parts.push_back(std::max<Extent>(1, (n + coarsen - 1) / coarsen));
        cuts[v] = parts;
      }
      continue;
    }
    const EinSum& e = vertex.resolved->einsum();
    const SparseRule rule = sparse_rule(e);
    if (rule == SparseRule::dense) continue;
    if (rule == SparseRule::union_of_shapes &&
        std::any_of(vertex.inputs.begin(), vertex.inputs.end(), [&](VertexId in) { return !cuts[in]; }))
      continue;  // computed dense
    std::string labels = aligned[v].labels();
    std::vector<Extent> parts = aligned[v].parts();
    bool sparse = false;
    std::vector<bool> cut(labels.size(), false);
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      if (!cuts[vertex.inputs[k]]) continue;
      sparse = true;
      finer[v] = finer[v] || finer[vertex.inputs[k]];
      for (std::size_t d = 0; d < e.inputs[k].size(); ++d) {
        const std::size_t at = labels.find(e.inputs[k][d]);
        const Extent n = (*cuts[vertex.inputs[k]])[d];
        parts[at] = cut[at] ? std::max(parts[at], n) : n;
        cut[at] = true;
      }
    }
    if (!sparse) continue;
    if (refine > 1 && !finer[v] && !e.output.empty()) {  // once along a chain of sparse vertices
      const std::size_t at = labels.find(e.output.back());
      parts[at] = std::min(parts[at] * refine, vertex.resolved->extent(e.output.back()));
      finer[v] = true;
    }
    aligned[v] = PartitionVector(labels, parts);
    cuts[v] = aligned[v].project(e.output);
  }
  return aligned;
}

}  // namespace einrel::partition
