#include <einrel_VertexMemory.hpp>

#include <algorithm>

namespace einrel::partition {
namespace {

double ceil_div(double a, double b) { return static_cast<double>(static_cast<Extent>((a + b - 1) / b)); }

// Elements of one block of a tensor indexed by `labels` cut by `parts`, and how many such blocks there are.
struct Blocks {
  double elements = 1;
  double count = 1;
};

Blocks blocks_of(const ResolvedEinSum& r, const std::string& labels, const std::vector<Extent>& parts) {
  Blocks b;
  const std::vector<std::size_t> at = r.positions(labels);
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const double part = static_cast<double>(parts[at[k]]);
    b.elements *= ceil_div(static_cast<double>(r.extent(labels[k])), part);
    b.count *= part;
  }
  return b;
}

}  // namespace

double vertex_bytes(const Graph& graph, VertexId v, const std::vector<Extent>& parts, const MemoryBudget& budget) {
  const Vertex& vertex = graph.vertex(v);
  const ResolvedEinSum& r = graph.resolved(v);
  const EinSum& e = r.einsum();
  double tuples = 1;
  for (Extent part : parts) tuples *= static_cast<double>(part);
  const double per_rank = ceil_div(tuples, static_cast<double>(budget.ranks));
  double bytes = budget.call_bytes ? budget.call_bytes(v, parts) : 0;
  for (std::size_t k = 0; k < e.arity(); ++k) {
    const Blocks b = blocks_of(r, e.inputs[k], parts);
    const VertexId in = vertex.inputs[k];
    const bool streamed = in < budget.streamed.size() && budget.streamed[in];
    bytes += (streamed ? 1 : std::min(per_rank, b.count)) * b.elements *
             static_cast<double>(dtype_bytes(graph.vertex(in).dtype));
  }
  const Blocks out = blocks_of(r, e.output, parts);
  return bytes + std::min(per_rank, out.count) * out.elements * static_cast<double>(dtype_bytes(vertex.dtype));
}

std::vector<double> resident_bytes(const Graph& graph, const MemoryBudget& budget) {
  const VertexId n = graph.size();
  // Value u is alive while the vertices after it up to its last reader run (to the end for an output).
  std::vector<VertexId> end(n, 0);
  for (VertexId v = 0; v < n; ++v)
    for (VertexId in : graph.vertex(v).inputs) end[in] = std::max(end[in], v);
  for (VertexId v : graph.outputs()) end[v] = n;
  auto share = [&](VertexId u) {
    return static_cast<double>(num_elements(graph.vertex(u).bound)) *
           static_cast<double>(dtype_bytes(graph.vertex(u).dtype)) / static_cast<double>(budget.ranks);
  };
  std::vector<double> change(n + 1, 0), resident(n, 0);  // alive after u: from u + 1 to end[u] - 1 beside its reader
  double alive = 0;
  for (VertexId v = 0; v < n; ++v) {
    alive += change[v];
    if (!graph.vertex(v).is_input()) {
      resident[v] = alive;
      std::vector<VertexId> operands = graph.vertex(v).inputs;
      std::sort(operands.begin(), operands.end());
      operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
      for (VertexId u : operands)
        if (end[u] > v) resident[v] -= share(u);  // counted in vertex_bytes
    }
    const bool streamed = v < budget.streamed.size() && budget.streamed[v];
    if (end[v] > v && !streamed) {  // alive from the next vertex while a later one reads it
      change[v + 1] += share(v);
      change[std::min<VertexId>(end[v], n)] -= share(v);
    }
  }
  return resident;
}

}  // namespace einrel::partition
