#include <einrel_SlicedPartitions.hpp>

namespace einrel::partition {

Plan sliced_plan(const SlicedGraph& sliced, const Plan& plan) {
  Plan out = plan;
  out.partitions.clear();
  const Graph& graph = sliced.graph;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    const PartitionVector& d = plan.partitions.at(sliced.origin[v]);
    if (vertex.is_input()) {
      out.partitions.push_back(d);
    } else if (sliced.combining[v]) {
      const std::string& labels = vertex.resolved->einsum().output;
      out.partitions.emplace_back(labels, d.project(labels));
    } else if (vertex.slice) {
      // The passes times the most parts up to the original's that cut each chunk evenly.
      std::vector<Extent> parts = d.parts();
      const std::size_t at = d.labels().find(vertex.slice->label);
      const Extent passes = vertex.slice->passes, extent = vertex.resolved->extent(vertex.slice->label);
      Extent per_pass = parts[at];
      while (extent % (per_pass * passes) != 0) --per_pass;
      parts[at] = per_pass * passes;
      out.partitions.emplace_back(d.labels(), std::move(parts));
    } else {
      out.partitions.push_back(d);
    }
  }
  cost_plan(graph, out);
  return out;
}

}  // namespace einrel::partition
