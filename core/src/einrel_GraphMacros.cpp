// The graph language's macros: n-ary einsums decomposed into binary vertices, and softmax.
#include <einrel_ContractionOrder.hpp>
#include <einrel_Graph.hpp>
#include <einrel_GraphMacros.hpp>

namespace einrel {

bool decomposes_pairwise(const EinSum& e) {
  const bool semiring = (e.join == JoinOp::mul && e.agg == AggOp::sum) ||
                        (e.join == JoinOp::add && (e.agg == AggOp::max || e.agg == AggOp::min));
  return semiring && e.map.kind == MapKind::identity;
}

VertexId Graph::add_nary(const std::string& name, const EinSum& e, const std::vector<VertexId>& operands,
                         const SourceLocation& origin) {
  if (!decomposes_pairwise(e))
    throw Error("an einsum of " + std::to_string(e.arity()) +
                " operands is computed pairwise, which is exact only for join=mul,agg=sum or join=add with "
                "agg=max or agg=min, and map=identity; got join=" +
                std::string(op_name(e.join)) + ", agg=" + std::string(op_name(e.agg)) + ", map=" + map_spelling(e.map));
  // Resolving reports a mismatch at the operand the user wrote.
  const ContractionOrder order = contraction_order(resolve_operands(e, operands));
  nary_.push_back(add_steps(name, e, operands, origin, order));
  return nary_.back().steps.back();
}

NaryEinsum Graph::add_steps(const std::string& name, const EinSum& e, const std::vector<VertexId>& operands,
                            const SourceLocation& origin, const ContractionOrder& order) {
  const std::vector<NaryStep>& steps = order.steps;
  NaryEinsum record{e.equation(), {}, order.method, order.flops, order.largest_intermediate, e, operands, origin};
  std::vector<VertexId> current = operands;
  std::vector<std::string> labels = e.inputs;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const NaryStep& step = steps[s];
    EinSum pair = e;
    pair.inputs = {labels[step.first], labels[step.second]};
    pair.output = step.labels;
    const bool last = s + 1 == steps.size();
    const VertexId result = add_einsum(last ? name : name + "__" + std::to_string(s + 1), pair,
                                       {current[step.first], current[step.second]}, origin);
    record.steps.push_back(result);
    current[step.first] = result;
    labels[step.first] = step.labels;
    current.erase(current.begin() + static_cast<std::ptrdiff_t>(step.second));
    labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(step.second));
  }
  return record;
}

Graph Graph::with_order(std::size_t nary, const ContractionOrder& order) const {
  const NaryEinsum& n = nary_.at(nary);
  const VertexId first = n.steps.front(), last = n.steps.back();
  if (order.steps.size() != n.steps.size() || last - first + 1 != n.steps.size())
    throw Error("an order of " + std::to_string(order.steps.size() + 1) + " operands does not fit '" + n.equation +
                "'");
  // The steps are consecutive vertices: those before and after them keep their ids.
  Graph g = *this;
  for (VertexId v = first; v < vertices_.size(); ++v) g.names_.erase(vertices_[v].name);
  g.vertices_.resize(first);
  g.nary_[nary] = g.add_steps(vertices_[last].name, n.einsum, n.operands, n.origin, order);
  for (VertexId v = last + 1; v < vertices_.size(); ++v) {
    g.vertices_.push_back(vertices_[v]);
    g.names_.emplace(vertices_[v].name, v);
  }
  return g;
}

VertexId Graph::softmax(VertexId x, const std::string& name_or_empty, SourceLocation origin) {
  if (x >= vertices_.size()) throw OperandError(0, "softmax operand is not a vertex");
  const std::size_t rank = vertices_[x].bound.size();
  if (rank == 0) throw OperandError(0, "softmax needs a tensor of rank >= 1; '" + vertices_[x].name + "' is 0-d");
  const std::string name = name_or_empty.empty() ? fresh_name() : name_or_empty;
  for (const char* part : {"__max", "__exp", "__sum", ""}) check_new_name(name + part);

  // eindecomp.txt §3: C = max_j X, E = exp(X - C), S = sum_j E, Y = E / S over the last label j, batched
  // over the others.
  const std::string all = std::string("abcdefgh").substr(0, rank), batch = all.substr(0, rank - 1);
  EinSum reduce_max = EinSum::parse(all + "->" + batch, 1);
  reduce_max.agg = AggOp::max;
  EinSum shifted_exp = EinSum::parse(all + "," + batch + "->" + all, 2);
  shifted_exp.join = JoinOp::sub;
  shifted_exp.map = {MapKind::exp, 0.0};
  const EinSum reduce_sum = EinSum::parse(all + "->" + batch, 1);
  EinSum divide = EinSum::parse(all + "," + batch + "->" + all, 2);
  divide.join = JoinOp::div;

  const VertexId c = add_einsum(name + "__max", reduce_max, {x}, origin);
  const VertexId e = add_einsum(name + "__exp", shifted_exp, {x, c}, origin);
  const VertexId s = add_einsum(name + "__sum", reduce_sum, {e}, origin);
  return add_einsum(name, divide, {e, s}, origin);
}

}  // namespace einrel
