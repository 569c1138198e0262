#include <einrel_ContractionChains.hpp>
#include <einrel_ContractionOrder.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace einrel {
namespace {

bool contraction_vertex(const Vertex& v) {
  return !v.is_input() && v.einsum->arity() == 2 && v.einsum->is_contraction() && !v.slice;
}

bool distinct_labels(const std::string& labels) {
  std::string sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

// One tree of binary contractions: its root, its vertices, and its leaves with their labels in the merged
// equation (letters from `letters`, one per distinct label of the tree).
class Tree {
 public:
  Tree(const Graph& graph, const std::vector<bool>& inner) : graph_(graph), inner_(inner) {}

  // Grows the tree under `root`; false where it cannot be one einsum (a repeated label, too many labels).
  bool grow(VertexId root) {
    std::string mine;
    while (mine.size() < graph_.vertex(root).einsum->output.size()) mine += fresh();
    output_ = mine;
    return ok_ && visit(root, mine);
  }
  const std::vector<VertexId>& vertices() const { return vertices_; }
  const std::vector<VertexId>& leaves() const { return leaves_; }
  std::string equation() const {
    std::string eq;
    for (std::size_t k = 0; k < leaf_labels_.size(); ++k) eq += (k ? "," : "") + leaf_labels_[k];
    return eq + "->" + output_;
  }

 private:
  static constexpr const char* letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

  char fresh() {
    if (used_ >= 52) {
      ok_ = false;
      return 'a';
    }
    return letters[used_++];
  }
  // Vertex v computes a value whose labels are `labels` in the merged equation.
  bool visit(VertexId v, const std::string& labels) {
    const EinSum& e = *graph_.vertex(v).einsum;
    vertices_.push_back(v);
    // The vertex's own letters: its output's are given; each other label a fresh one.
    std::string from, to;
    for (std::size_t i = 0; i < e.output.size(); ++i) from += e.output[i], to += labels[i];
    for (const std::string& in : e.inputs)
      for (char c : in)
        if (from.find(c) == std::string::npos) from += c, to += fresh();
    if (!ok_) return false;
    for (std::size_t k = 0; k < 2; ++k) {
      std::string mapped;
      for (char c : e.inputs[k]) mapped += to[from.find(c)];
      if (!distinct_labels(mapped)) return false;
      const VertexId in = graph_.vertex(v).inputs[k];
      if (inner_[in]) {
        if (!visit(in, mapped)) return false;
      } else {
        leaves_.push_back(in);
        leaf_labels_.push_back(mapped);
      }
    }
    return true;
  }

  const Graph& graph_;
  const std::vector<bool>& inner_;
  std::size_t used_ = 0;
  bool ok_ = true;
  std::string output_;
  std::vector<VertexId> vertices_, leaves_;
  std::vector<std::string> leaf_labels_;
};

}  // namespace

std::optional<Graph> merge_contraction_chains(const Graph& graph) {
  const VertexId n = graph.size();
  std::vector<int> reads(n, 0);
  for (const Vertex& v : graph.vertices())
    for (VertexId in : v.inputs) ++reads[in];
  std::vector<bool> output(n, false);
  for (VertexId v : graph.outputs()) output[v] = true;
  std::vector<bool> in_nary(n, false);  // already the step of an n-ary einsum: its own order is searched
  for (const NaryEinsum& nary : graph.nary_einsums())
    for (VertexId v : nary.steps) in_nary[v] = true;
  auto usable = [&](VertexId v) { return contraction_vertex(graph.vertex(v)) && !in_nary[v]; };
  // An inner value: a usable vertex read once, by a usable vertex, and no output. Sparse operands stay out.
  std::vector<bool> inner(n, false), has_reader(n, false);
  for (VertexId v = 0; v < n; ++v)
    if (usable(v))
      for (VertexId in : graph.vertex(v).inputs) has_reader[in] = true;
  for (VertexId v = 0; v < n; ++v) inner[v] = usable(v) && has_reader[v] && reads[v] == 1 && !output[v];
  // Roots: usable vertices that are no inner value and read one; their trees.
  std::vector<std::optional<Tree>> trees(n);
  std::vector<bool> merged(n, false);
  bool any = false;
  for (VertexId v = 0; v < n; ++v) {
    if (!usable(v) || inner[v]) continue;
    const auto& ins = graph.vertex(v).inputs;
    if (std::none_of(ins.begin(), ins.end(), [&](VertexId in) { return inner[in]; })) continue;
    Tree tree(graph, inner);
    if (!tree.grow(v) || tree.leaves().size() > alternative_operands) continue;
    const auto& leaves = tree.leaves();
    if (std::any_of(leaves.begin(), leaves.end(), [&](VertexId u) { return graph.vertex(u).sparse; })) continue;
    for (VertexId u : tree.vertices()) merged[u] = true;
    trees[v].emplace(std::move(tree));
    any = true;
  }
  if (!any) return std::nullopt;
  // The graph again, each tree's root replaced by the n-ary einsum of its leaves, the tree's other vertices left out.
  Graph out;
  std::vector<VertexId> id(n);
  auto operands_of = [&](const std::vector<VertexId>& of) {
    std::vector<VertexId> ops;
    for (VertexId u : of) ops.push_back(id[u]);
    return ops;
  };
  std::vector<bool> nary_done(graph.nary_einsums().size(), false);
  for (VertexId v = 0; v < n; ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) {
      id[v] = vertex.sparse ? out.sparse_input(vertex.name, vertex.dtype, vertex.bound, vertex.origin)
                            : out.input(vertex.name, vertex.dtype, vertex.bound, vertex.origin);
      if (vertex.shape) out.bind_shape(id[v], *vertex.shape);
    } else if (trees[v]) {
      EinsumOptions options;
      options.name = vertex.name;
      options.origin = vertex.origin;
      id[v] = out.einsum(trees[v]->equation(), operands_of(trees[v]->leaves()), options);
    } else if (!merged[v] && in_nary[v]) {  // an n-ary einsum of the graph: added whole at its first step
      for (std::size_t k = 0; k < graph.nary_einsums().size(); ++k) {
        const NaryEinsum& nary = graph.nary_einsums()[k];
        if (nary_done[k] || std::find(nary.steps.begin(), nary.steps.end(), v) == nary.steps.end()) continue;
        nary_done[k] = true;
        EinsumOptions options{nary.einsum.join, nary.einsum.agg, nary.einsum.map, graph.vertex(nary.steps.back()).name,
                              nary.origin};
        const VertexId result = out.einsum(nary.einsum.equation(), operands_of(nary.operands), options);
        const std::vector<VertexId>& steps = out.nary_einsums().back().steps;
        for (std::size_t s = 0; s < steps.size(); ++s) id[nary.steps[s]] = steps[s];
        id[nary.steps.back()] = result;
      }
    } else if (!merged[v]) {
      id[v] = out.add_einsum(vertex.name, *vertex.einsum, operands_of(vertex.inputs), vertex.origin);
      if (vertex.slice) out.slice_vertex(id[v], *vertex.slice);
    }
  }
  for (VertexId v : graph.outputs()) out.output(id[v]);
  return out;
}

}  // namespace einrel
