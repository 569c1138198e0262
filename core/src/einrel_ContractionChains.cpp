#include <einrel_ContractionChains.hpp>
#include <einrel_ContractionOrder.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
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
    Leaves all = 0;
    return ok_ && visit(root, mine, all);
  }
  // Whether planning the merged einsum may change the plan (ChainMerge): some order the planner weighs for it
  // (contraction_orders) is not the tree as written, and with `cheaper_by_flops`, the first of them (the least
  // flops, exact at this many operands) needs fewer flops than the tree as written.
  bool worth_merging(ChainMerge merge) const {
    std::vector<Bound> bounds;
    for (VertexId leaf : leaves_) bounds.push_back(graph_.vertex(leaf).bound);
    const ResolvedEinSum resolved = resolve(EinSum::parse(equation(), leaves_.size()), bounds);
    const std::vector<ContractionOrder> orders = contraction_orders(resolved);
    if (merge == ChainMerge::cheaper_by_flops)
      return orders.front().flops < costed_order(resolved, written_steps()).flops * (1 - 1e-12);
    std::vector<Pair> written = pairs_;
    std::sort(written.begin(), written.end());
    return std::any_of(orders.begin(), orders.end(),
                       [&](const ContractionOrder& order) { return pairs_of(order) != written; });
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
  using Leaves = std::uint32_t;  // a set of leaves by their index: at most alternative_operands of them
  // One binary step: the leaves under its operands, in operand order, and its result's labels.
  using Pair = std::tuple<Leaves, Leaves, std::string>;

  // The steps of `order`, sorted: each joins the leaves of its two operands (NaryStep: the result takes the first's
  // place, the second's goes).
  std::vector<Pair> pairs_of(const ContractionOrder& order) const {
    std::vector<Leaves> operands;
    for (std::size_t k = 0; k < leaves_.size(); ++k) operands.push_back(Leaves{1} << k);
    std::vector<Pair> pairs;
    for (const NaryStep& step : order.steps) {
      pairs.emplace_back(operands[step.first], operands[step.second], step.labels);
      operands[step.first] |= operands[step.second];
      operands.erase(operands.begin() + static_cast<std::ptrdiff_t>(step.second));
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
  }

  // The tree as written as NaryStep's (its vertices in the order visit made them, children first).
  std::vector<NaryStep> written_steps() const {
    std::vector<Leaves> operands;
    for (std::size_t k = 0; k < leaves_.size(); ++k) operands.push_back(Leaves{1} << k);
    std::vector<NaryStep> steps;
    for (const auto& [a, b, labels] : pairs_) {
      const auto at = [&](Leaves x) {
        return static_cast<std::size_t>(std::find(operands.begin(), operands.end(), x) - operands.begin());
      };
      const std::size_t first = std::min(at(a), at(b)), second = std::max(at(a), at(b));
      steps.push_back({first, second, labels});
      operands[first] = a | b;
      operands.erase(operands.begin() + static_cast<std::ptrdiff_t>(second));
    }
    return steps;
  }

  // Vertex v computes a value whose labels are `labels` in the merged equation; `under` gets the leaves below it.
  bool visit(VertexId v, const std::string& labels, Leaves& under) {
    const EinSum& e = *graph_.vertex(v).einsum;
    vertices_.push_back(v);
    // The vertex's own letters: its output's are given; each other label a fresh one.
    std::string from, to;
    for (std::size_t i = 0; i < e.output.size(); ++i) from += e.output[i], to += labels[i];
    for (const std::string& in : e.inputs)
      for (char c : in)
        if (from.find(c) == std::string::npos) from += c, to += fresh();
    if (!ok_) return false;
    Leaves operand[2] = {0, 0};
    for (std::size_t k = 0; k < 2; ++k) {
      std::string mapped;
      for (char c : e.inputs[k]) mapped += to[from.find(c)];
      if (!distinct_labels(mapped)) return false;
      const VertexId in = graph_.vertex(v).inputs[k];
      if (inner_[in]) {
        if (!visit(in, mapped, operand[k])) return false;
      } else {
        if (leaves_.size() >= alternative_operands) return false;  // too many leaves to merge
        operand[k] = Leaves{1} << leaves_.size();
        leaves_.push_back(in);
        leaf_labels_.push_back(mapped);
      }
    }
    pairs_.emplace_back(operand[0], operand[1], labels);
    under = operand[0] | operand[1];
    return true;
  }

  const Graph& graph_;
  const std::vector<bool>& inner_;
  std::size_t used_ = 0;
  bool ok_ = true;
  std::string output_;
  std::vector<VertexId> vertices_, leaves_;
  std::vector<std::string> leaf_labels_;
  std::vector<Pair> pairs_;  // the tree's steps as written
};

}  // namespace

std::optional<Graph> merge_contraction_chains(const Graph& graph, ChainMerge merge) {
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
    if (!tree.grow(v)) continue;  // alternative_operands leaves at most
    const auto& leaves = tree.leaves();
    if (std::any_of(leaves.begin(), leaves.end(), [&](VertexId u) { return graph.vertex(u).sparse; })) continue;
    if (!tree.worth_merging(merge)) continue;
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
