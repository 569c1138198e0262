#include <einrel_LayerRoles.hpp>

#include <algorithm>
#include <numeric>

namespace einrel::partition {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

bool contains(const std::string& labels, char l) { return labels.find(l) != std::string::npos; }

// The attention scores vertex, if any (see LayerRoles).
std::optional<VertexId> scores_vertex(const Graph& graph) {
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input() || vertex.inputs.size() != 2) continue;
    const EinSum& e = *vertex.einsum;
    if (e.join != JoinOp::mul || e.agg != AggOp::sum || e.output.size() != 3 || e.inputs[0].size() != 3 ||
        e.inputs[1].size() != 3 || graph.vertex(vertex.inputs[0]).is_input() ||
        graph.vertex(vertex.inputs[1]).is_input())
      continue;
    int kept_shared = 0, summed_shared = 0, kept_alone = 0;
    for (char l : e.inputs[0]) {
      const bool shared = contains(e.inputs[1], l), kept = contains(e.output, l);
      kept_shared += shared && kept;
      summed_shared += shared && !kept;
      kept_alone += !shared && kept;
    }
    for (char l : e.inputs[1]) kept_alone += !contains(e.inputs[0], l) && contains(e.output, l);
    if (kept_shared == 1 && summed_shared == 1 && kept_alone == 2) return v;
  }
  return std::nullopt;
}

}  // namespace

int DimensionClasses::of_label(const Graph& graph, VertexId v, char label) const {
  const ResolvedEinSum& e = graph.resolved(v);
  if (const std::size_t at = e.position_in_output(label); at != ResolvedEinSum::absent) return of[v][at];
  for (std::size_t k = 0; k < e.arity(); ++k)
    if (const std::size_t at = e.position_in(k, label); at != ResolvedEinSum::absent)
      return of[graph.vertex(v).inputs[k]][at];
  throw Error("dimension_classes: vertex '" + graph.vertex(v).name + "' has no label '" + std::string(1, label) + "'");
}

DimensionClasses dimension_classes(const Graph& graph) {
  std::vector<int> first(graph.size() + 1, 0);  // id of (v, dim) = first[v] + dim
  for (VertexId v = 0; v < graph.size(); ++v) first[v + 1] = first[v] + static_cast<int>(graph.vertex(v).bound.size());
  UnionFind sets(static_cast<std::size_t>(first.back()));
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const ResolvedEinSum& e = graph.resolved(v);
    for (char l : e.unique_labels()) {
      int root = -1;
      auto join = [&](int id) { root < 0 ? void(root = id) : sets.join(id, root); };
      if (const std::size_t at = e.position_in_output(l); at != ResolvedEinSum::absent)
        join(first[v] + static_cast<int>(at));
      for (std::size_t k = 0; k < e.arity(); ++k)
        if (const std::size_t at = e.position_in(k, l); at != ResolvedEinSum::absent)
          join(first[vertex.inputs[k]] + static_cast<int>(at));
    }
  }
  DimensionClasses classes;
  classes.of.resize(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v)
    for (int d = first[v]; d < first[v + 1]; ++d) classes.of[v].push_back(sets.find(d));
  return classes;
}

std::optional<LayerRoles> layer_roles(const Graph& graph) {
  const auto scores = scores_vertex(graph);
  if (!scores) return std::nullopt;
  LayerRoles roles;
  roles.classes = dimension_classes(graph);
  const EinSum& s = *graph.vertex(*scores).einsum;
  for (char l : s.inputs[0]) {
    const int c = roles.classes.of_label(graph, *scores, l);
    if (!contains(s.inputs[1], l))
      roles.sequence = c;
    else if (contains(s.output, l))
      roles.heads = c;
    else
      roles.head_dim = c;
  }
  std::vector<int> projected{roles.sequence, roles.heads, roles.head_dim};
  std::sort(projected.begin(), projected.end());
  for (VertexId v = 0; v < graph.size() && roles.model < 0; ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input() || vertex.einsum->aggregated_labels().size() != 1 ||
        std::none_of(vertex.inputs.begin(), vertex.inputs.end(),
                     [&](VertexId in) { return graph.vertex(in).is_input(); }))
      continue;
    std::vector<int> out = roles.classes.of[v];
    std::sort(out.begin(), out.end());
    if (out == projected) roles.model = roles.classes.of_label(graph, v, vertex.einsum->aggregated_labels()[0]);
  }
  for (VertexId v = 0; v < graph.size() && roles.model >= 0; ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (!vertex.is_input() || vertex.bound.size() != 2) continue;
    const std::vector<int>& c = roles.classes.of[v];
    for (int k = 0; k < 2; ++k) {
      const int other = c[1 - k];
      if (c[k] == roles.model && other != roles.model && other != roles.sequence && other != roles.heads &&
          other != roles.head_dim && std::find(roles.hidden.begin(), roles.hidden.end(), other) == roles.hidden.end())
        roles.hidden.push_back(other);
    }
  }
  return roles;
}

}  // namespace einrel::partition
