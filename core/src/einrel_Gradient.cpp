// Reverse mode on an EinGraph. A vertex computes Z[out] = ⊕ over its aggregated labels of f(X[lx] ⊗ Y[ly]);
// with U = X ⊗ Y and V = f(U) over all its labels u, the gradient G of Z goes back in three steps:
// through ⊕ to V, through f to U, through ⊗ to each operand. A contraction's operand gradient is the
// label-swapping rule of einsum-sharding-rules.txt ("Einsum backwards": keep the other operand, swap the
// differentiated operand's labels with the output's); the other ops are the same einsum with the local
// derivative as the other operand. Every rule is written in the graph language itself (docs/gradient.md).
#include <einrel_Gradient.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace einrel {
namespace {

// A tensor as an einsum operand: a vertex and one label per dimension.
struct Term {
  VertexId v;
  std::string labels;
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

std::string canonical_labels(std::size_t rank) { return std::string("abcdefgh").substr(0, rank); }

// For each output label of an einsum, the dimension of `operand` that carries it
// (npos where the operand lacks it).
std::vector<std::size_t> output_dims_in(const std::string& output, const std::string& operand) {
  std::vector<std::size_t> dims;
  for (char c : output) dims.push_back(operand.find(c));
  return dims;
}

// Vertices whose gradient path is exactly zero: the row maximum M of a softmax (eindecomp.txt §3), where
// E = exp(X − M) is read only by S = sum of E over the labels M removed and by E / S. Softmax does not change
// when every row is shifted by a constant, so d/dM of anything computed from E / S is 0.
std::set<VertexId> softmax_shifts(const Graph& g, const std::vector<std::vector<VertexId>>& consumers) {
  std::set<VertexId> shifts;
  for (VertexId m = 0; m < g.size(); ++m) {
    const Vertex& mv = g.vertex(m);
    if (mv.is_input() || mv.einsum->arity() != 1 || mv.einsum->agg != AggOp::max ||
        mv.einsum->map.kind != MapKind::identity || mv.einsum->aggregated_labels().empty())
      continue;
    const VertexId x = mv.inputs[0];
    // X's dimensions that M keeps, in M's order.
    const auto kept = output_dims_in(mv.einsum->output, mv.einsum->inputs[0]);
    bool cancels = !consumers[m].empty();
    for (VertexId e : consumers[m]) {
      const Vertex& ev = g.vertex(e);
      const EinSum& ee = *ev.einsum;
      cancels = cancels && ee.arity() == 2 && ee.join == JoinOp::sub && ee.map.kind == MapKind::exp &&
                ev.inputs[0] == x && ev.inputs[1] == m && ee.output == ee.inputs[0] &&
                output_dims_in(ee.inputs[1], ee.inputs[0]) == kept && !consumers[e].empty();
      if (!cancels) break;
      // E's readers: S = sum over the same dimensions, and quotients E / S.
      for (VertexId r : consumers[e]) {
        const Vertex& rv = g.vertex(r);
        const EinSum& re = *rv.einsum;
        const bool is_sum = re.arity() == 1 && re.agg == AggOp::sum && re.map.kind == MapKind::identity &&
                            output_dims_in(re.output, re.inputs[0]) == kept;
        const bool is_quotient = re.arity() == 2 && re.join == JoinOp::div && rv.inputs[0] == e &&
                                 re.aggregated_labels().empty() && re.inputs[0].size() == ev.bound.size();
        if (is_quotient) {
          const VertexId s = rv.inputs[1];
          const Vertex& sv = g.vertex(s);
          // The divisor is such a sum of E, aligned like M with X.
          cancels = !sv.is_input() && sv.inputs[0] == e && sv.einsum->arity() == 1 && sv.einsum->agg == AggOp::sum &&
                    sv.einsum->map.kind == MapKind::identity &&
                    output_dims_in(sv.einsum->output, sv.einsum->inputs[0]) == kept &&
                    output_dims_in(re.inputs[1], re.inputs[0]) == kept;
        } else if (is_sum) {
          for (VertexId q : consumers[r]) {
            const Vertex& qv = g.vertex(q);
            cancels = cancels && qv.einsum->join == JoinOp::div && qv.einsum->arity() == 2 && qv.inputs[0] == e &&
                      qv.inputs[1] == r;
          }
        } else {
          cancels = false;
        }
        if (!cancels) break;
      }
      if (!cancels) break;
    }
    if (cancels) shifts.insert(m);
  }
  return shifts;
}

class Backward {
 public:
  Backward(Graph& g, VertexId loss, const std::vector<VertexId>& wrt) : g_(g) {
    const std::size_t n = g.size();
    consumers_.resize(n);
    for (VertexId v = 0; v < n; ++v)
      for (VertexId o : g.vertex(v).inputs)
        if (consumers_[o].empty() || consumers_[o].back() != v) consumers_[o].push_back(v);
    const auto stopped = softmax_shifts(g, consumers_);
    // Active: on a path from some w to the loss, through vertices whose gradient is not exactly zero.
    std::vector<bool> depends(n, false), reaches(n, false);
    for (VertexId w : wrt) depends[w] = true;
    for (VertexId v = 0; v < n; ++v)
      if (!stopped.count(v))
        for (VertexId o : g.vertex(v).inputs) depends[v] = depends[v] || depends[o];
    reaches[loss] = true;
    for (VertexId v = loss + 1; v-- > 0;)
      if (reaches[v] && !stopped.count(v))
        for (VertexId o : g.vertex(v).inputs) reaches[o] = true;
    active_.resize(n);
    for (VertexId v = 0; v < n; ++v) active_[v] = depends[v] && reaches[v] && !stopped.count(v);
    // A w read once on the gradient's path gets its one contribution under its final name.
    edges_.assign(n, 0);
    for (VertexId v = 0; v < n; ++v)
      if (active_[v])
        for (VertexId o : g.vertex(v).inputs) ++edges_[o];
    for (VertexId w : wrt) final_name_[w] = "grad_" + g.vertex(w).name;
    contributions_.resize(n);
    // The seed d loss / d loss = 1: x⁰ is 1 for every x (IEEE pow), NaN and inf included.
    if (active_[loss])
      contributions_[loss].push_back(add({{loss, ""}}, "", JoinOp::mul, {MapKind::pow, 0.0}, base_of(loss)));
    for (VertexId z = loss + 1; z-- > 0;)
      if (active_[z] && !g.vertex(z).is_input() && !contributions_[z].empty()) backward(z);
  }

  // The gradient of input w: its contributions summed, named grad_W.
  VertexId gradient_of(VertexId w) {
    const Vertex& wv = g_.vertex(w);
    const std::string all = canonical_labels(wv.bound.size()), name = "grad_" + wv.name;
    auto& parts = contributions_[w];
    if (parts.empty()) {
      // Not reachable: zeros of w's shape (pow(0) makes ones whatever w holds).
      const VertexId ones = add({{w, all}}, all, JoinOp::mul, {MapKind::pow, 0.0}, name + "__");
      return g_.add_einsum(name, unary(all, all, {MapKind::scale, 0.0}), {ones});
    }
    return sum_of(w, name);
  }

 private:
  EinSum unary(const std::string& in, const std::string& out, MapOp map) const {
    EinSum e;
    e.inputs = {in};
    e.output = out;
    e.map = map;
    return e;
  }

  // A vertex Z[out] = sum over the other labels of map(join(terms)), named after `base`.
  VertexId add(const std::vector<Term>& terms, const std::string& out, JoinOp join, MapOp map,
               const std::string& base) {
    return add_named(fresh(base), terms, out, join, map);
  }

  VertexId add_named(const std::string& name, const std::vector<Term>& terms, const std::string& out, JoinOp join,
                     MapOp map) {
    EinSum e;
    std::vector<VertexId> operands;
    for (const Term& t : terms) {
      e.inputs.push_back(t.labels);
      operands.push_back(t.v);
    }
    e.output = out;
    e.join = terms.size() == 2 ? join : JoinOp::mul;
    e.map = map;
    return g_.add_einsum(name, e, operands);
  }

  std::string fresh(const std::string& base) {
    for (std::size_t k = 1;; ++k) {
      const std::string name = base + std::to_string(k);
      if (!g_.find(name)) return name;
    }
  }

  // The sum of a vertex's gradient contributions, all aligned with its dimensions; named `name` when given.
  VertexId sum_of(VertexId v, const std::string& name = "") {
    auto& parts = contributions_[v];
    const std::string all = canonical_labels(g_.vertex(v).bound.size());
    const std::string base = "grad_" + g_.vertex(v).name + "__";
    if (parts.size() == 1 && (name.empty() || g_.vertex(parts[0]).name == name)) return parts[0];
    VertexId acc = parts[0];
    for (std::size_t k = 1; k < parts.size(); ++k) {
      EinSum e;
      e.inputs = {all, all};
      e.output = all;
      e.join = JoinOp::add;
      const bool last = k + 1 == parts.size();
      acc = g_.add_einsum(last && !name.empty() ? name : fresh(base), e, {acc, parts[k]});
    }
    if (parts.size() == 1) acc = g_.add_einsum(name, unary(all, all, {}), {acc});
    parts = {acc};
    return acc;
  }

  // Records d loss / d X += sum over the labels not in lx of scale · join(terms): the contribution of one
  // consumer to operand X, whose labels there are lx. Labels of the consumer that no term carries and X
  // lacks (the gradient is constant along them) multiply by their extents; labels of X that no term
  // carries are broadcast from the gradient (terms[0]) by a `first` join with X.
  void contribute(VertexId x, const std::string& lx, std::vector<Term> terms, JoinOp join, double scale,
                  const ResolvedEinSum& z) {
    std::string carried;
    for (const Term& t : terms) carried += t.labels;
    for (char c : z.einsum().unique_labels())
      if (!has(carried, c) && !has(lx, c)) scale *= static_cast<double>(z.extent(c));
    std::string missing;
    for (char c : lx)
      if (!has(carried, c)) missing += c;
    if (!missing.empty()) {
      // Every label of X in the broadcast's output, so that it aggregates nothing.
      std::string wide = terms[0].labels;
      for (char c : lx)
        if (!has(wide, c)) wide += c;
      terms[0] = {add({terms[0], {x, lx}}, wide, JoinOp::first, {}, base_of(x)), wide};
    }
    const MapOp map = scale == 1.0 ? MapOp{} : scale == -1.0 ? MapOp{MapKind::neg, 0.0} : MapOp{MapKind::scale, scale};
    if (terms.size() == 1 && terms[0].labels == lx && map.kind == MapKind::identity) {
      contributions_[x].push_back(terms[0].v);
      return;
    }
    const auto final_name = final_name_.find(x);
    contributions_[x].push_back(final_name != final_name_.end() && edges_[x] == 1
                                    ? add_named(final_name->second, terms, lx, join, map)
                                    : add(terms, lx, join, map, base_of(x)));
  }

  std::string base_of(VertexId v) const { return "grad_" + g_.vertex(v).name + "__"; }

  // The vertex Z being differentiated: its EinSum and operands, and the terms over all its labels u that
  // the rules share, U = join of the operands and V = f(U), each made at most once.
  struct Site {
    Site(Backward& backward, VertexId vertex)
        : b(backward),
          z(vertex),
          rz(b.g_.resolved(z)),
          e(*b.g_.vertex(z).einsum),
          ops(b.g_.vertex(z).inputs),
          u(e.unique_labels()),
          base(b.base_of(z)),
          aggregates(!e.aggregated_labels().empty()) {}

    // m(U) over all labels u, one vertex (or an existing one: Z itself when nothing is aggregated, X for a
    // unary einsum's U).
    Term of_joined(MapOp m) {
      if (e.arity() == 1 && m.kind == MapKind::identity) return {ops[0], e.inputs[0]};
      if (!aggregates && m == e.map) return {z, e.output};
      std::vector<Term> terms{{ops[0], e.inputs[0]}};
      if (e.arity() == 2) terms.push_back({ops[1], e.inputs[1]});
      return {b.add(terms, u, e.join, m, base), u};
    }
    Term V() { return v_cache ? *v_cache : *(v_cache = of_joined(e.map)); }
    Term U() { return u_cache ? *u_cache : *(u_cache = of_joined({})); }
    Term unary_of(const Term& t, MapOp m) { return {b.add({t}, t.labels, JoinOp::mul, m, base), t.labels}; }
    Term times(const Term& g, const Term& d, JoinOp join = JoinOp::mul, MapOp m = {}) {
      return {b.add({g, d}, u, join, m, base), u};
    }

    Backward& b;
    const VertexId z;
    const ResolvedEinSum rz;  // a copy: adding vertices moves the graph's own
    const EinSum e;
    const std::vector<VertexId> ops;
    const std::string u, base;
    const bool aggregates;
    std::optional<Term> v_cache, u_cache;
  };

  void backward(VertexId z) {
    Site s(*this, z);
    const Term G{sum_of(z), s.e.output};
    if (const std::optional<Term> GU = through_map(s, through_aggregation(s, G))) through_join(s, *GU);
  }

  // 1. Through the aggregation: the gradient of V, constant along labels it lacks.
  Term through_aggregation(Site& s, const Term& G) {
    const EinSum& e = s.e;
    if (!s.aggregates || e.agg == AggOp::sum) return G;
    const Term v = s.V();
    if (e.agg == AggOp::prod) {
      // d prod / d v_i = Z / v_i: exact where no factor is 0 (there it is inf or NaN, docs/gradient.md).
      const Term w{add({G, {s.z, e.output}}, e.output, JoinOp::mul, {}, s.base), e.output};
      return s.times(w, v, JoinOp::div);
    }
    // max/min: the gradient goes to where V equals Z, shared evenly among ties.
    const Term mask = s.times(v, {s.z, e.output}, JoinOp::eq);
    const Term count{add({mask}, e.output, JoinOp::mul, {}, s.base), e.output};
    const Term w{add({G, count}, e.output, JoinOp::div, {}, s.base), e.output};
    return s.times(mask, w);
  }

  // 2. Through the map f: the gradient of U. None where f' is 0 almost everywhere (sign).
  std::optional<Term> through_map(Site& s, const Term& GV) {
    const EinSum& e = s.e;
    const double c = e.map.constant;
    switch (e.map.kind) {
      case MapKind::identity:
      case MapKind::shift:
        return GV;
      case MapKind::neg:
        return s.unary_of(GV, {MapKind::neg, 0.0});
      case MapKind::scale:
        return s.unary_of(GV, e.map);
      case MapKind::exp:
        return s.times(GV, s.V());
      case MapKind::log:
        return s.times(GV, s.U(), JoinOp::div);
      case MapKind::abs:
        return s.times(GV, s.of_joined({MapKind::sign, 0.0}));  // 0 at 0
      case MapKind::relu:
        return s.times(GV, s.unary_of(s.V(), {MapKind::sign, 0.0}));  // sign(relu(u)): 1 where u > 0, else 0
      case MapKind::square:
        return s.times(GV, s.U(), JoinOp::mul, {MapKind::scale, 2.0});
      case MapKind::sqrt:
        return s.times(GV, s.V(), JoinOp::div, {MapKind::scale, 0.5});
      case MapKind::tanh: {
        const Term v = s.V();  // 1 − v²
        return s.times(GV, s.times(v, v, JoinOp::mul, {MapKind::shift, -1.0}), JoinOp::mul, {MapKind::neg, 0.0});
      }
      case MapKind::sigmoid: {
        const Term v = s.V();  // v (1 − v)
        return s.times(GV, s.times(v, s.unary_of(v, {MapKind::shift, -1.0}), JoinOp::mul, {MapKind::neg, 0.0}));
      }
      case MapKind::pow:
        if (c == 0.0) return std::nullopt;
        return s.times(GV, s.of_joined({MapKind::pow, c - 1.0}), JoinOp::mul, {MapKind::scale, c});
      case MapKind::sign:
        return std::nullopt;
    }
    return std::nullopt;
  }

  // 3. Through the join to each operand that leads to a w.
  void through_join(Site& s, const Term& GU) {
    const EinSum& e = s.e;
    const auto wants = [&](std::size_t k) { return active_[s.ops[k]]; };
    if (e.arity() == 1) {
      if (wants(0)) contribute(s.ops[0], e.inputs[0], {GU}, JoinOp::mul, 1.0, s.rz);
      return;
    }
    const Term X{s.ops[0], e.inputs[0]}, Y{s.ops[1], e.inputs[1]};
    const std::string& lx = X.labels;
    const std::string& ly = Y.labels;
    switch (e.join) {
      case JoinOp::mul:  // the label-swapping rule
        if (wants(0)) contribute(X.v, lx, {GU, Y}, JoinOp::mul, 1.0, s.rz);
        if (wants(1)) contribute(Y.v, ly, {GU, X}, JoinOp::mul, 1.0, s.rz);
        break;
      case JoinOp::add:
      case JoinOp::sub:
        if (wants(0)) contribute(X.v, lx, {GU}, JoinOp::mul, 1.0, s.rz);
        if (wants(1)) contribute(Y.v, ly, {GU}, JoinOp::mul, e.join == JoinOp::sub ? -1.0 : 1.0, s.rz);
        break;
      case JoinOp::div:  // d(x/y)/dx = 1/y, d(x/y)/dy = −(x/y)/y
        if (wants(0)) contribute(X.v, lx, {GU, Y}, JoinOp::div, 1.0, s.rz);
        if (wants(1)) contribute(Y.v, ly, {s.times(GU, s.U()), Y}, JoinOp::div, -1.0, s.rz);
        break;
      case JoinOp::max:
      case JoinOp::min: {
        // Where X won (ties: X) the gradient goes to X, elsewhere to Y.
        const Term won = s.times(s.U(), X, JoinOp::eq);
        if (wants(0)) contribute(X.v, lx, {GU, won}, JoinOp::mul, 1.0, s.rz);
        if (wants(1)) contribute(Y.v, ly, {GU, s.times(GU, won)}, JoinOp::sub, 1.0, s.rz);
        break;
      }
      case JoinOp::sqdiff: {
        const Term diff{add({X, Y}, s.u, JoinOp::sub, {}, s.base), s.u};
        if (wants(0)) contribute(X.v, lx, {GU, diff}, JoinOp::mul, 2.0, s.rz);
        if (wants(1)) contribute(Y.v, ly, {GU, diff}, JoinOp::mul, -2.0, s.rz);
        break;
      }
      case JoinOp::absdiff: {
        const Term sign{add({X, Y}, s.u, JoinOp::sub, {MapKind::sign, 0.0}, s.base), s.u};  // 0 where x = y
        if (wants(0)) contribute(X.v, lx, {GU, sign}, JoinOp::mul, 1.0, s.rz);
        if (wants(1)) contribute(Y.v, ly, {GU, sign}, JoinOp::mul, -1.0, s.rz);
        break;
      }
      case JoinOp::first:
        if (wants(0)) contribute(X.v, lx, {GU}, JoinOp::mul, 1.0, s.rz);
        break;
      case JoinOp::eq:  // piecewise constant
        break;
    }
  }

  Graph& g_;
  std::vector<std::vector<VertexId>> consumers_;
  std::vector<bool> active_;
  std::vector<int> edges_;                            // reads of each vertex by active vertices
  std::map<VertexId, std::string> final_name_;        // grad_W of each w
  std::vector<std::vector<VertexId>> contributions_;  // aligned with the vertex's dimensions
};

Error not_an_input(const std::string& name) {
  return Error("gradient: '" + name + "' is computed by an einsum; gradients are taken with respect to inputs");
}

std::string describe_bound(const Bound& b) {
  std::string s = "[";
  for (std::size_t k = 0; k < b.size(); ++k) s += (k ? "," : "") + std::to_string(b[k]);
  return s + "]";
}

}  // namespace

std::vector<VertexId> append_gradient(Graph& graph, VertexId loss, const std::vector<VertexId>& wrt) {
  if (loss >= graph.size()) throw Error("gradient: the loss is not a vertex of the graph");
  const Vertex& lv = graph.vertex(loss);
  if (lv.is_input()) throw Error("gradient: the loss '" + lv.name + "' is an input; it must be computed by an einsum");
  if (!lv.bound.empty())
    throw Error("gradient: the loss '" + lv.name + "' must be 0-d (a scalar); it is " + describe_bound(lv.bound));
  if (wrt.empty()) throw Error("gradient: no tensors to differentiate with respect to");
  std::set<VertexId> seen;
  for (VertexId w : wrt) {
    if (w >= graph.size()) throw Error("gradient: a tensor to differentiate with respect to is not a vertex");
    const Vertex& wv = graph.vertex(w);
    if (!wv.is_input()) throw not_an_input(wv.name);
    if (!seen.insert(w).second) throw Error("gradient: '" + wv.name + "' is named twice");
    if (graph.find("grad_" + wv.name))
      throw Error("gradient: the graph already has a vertex named 'grad_" + wv.name + "'; rename it");
  }
  Graph work = graph;  // a failure leaves `graph` untouched
  Backward backward(work, loss, wrt);
  std::vector<VertexId> grads;
  for (VertexId w : wrt) grads.push_back(backward.gradient_of(w));
  graph = std::move(work);
  return grads;
}

namespace {

// The inputs of `graph` and the vertices `loss` depends on, copied into a new graph; `copy` maps old ids to
// new ones.
Graph loss_subgraph(const Graph& graph, VertexId loss, std::map<VertexId, VertexId>& copy) {
  std::vector<bool> needed(graph.size(), false);
  needed[loss] = true;
  for (VertexId v = loss + 1; v-- > 0;)
    if (needed[v])
      for (VertexId o : graph.vertex(v).inputs) needed[o] = true;
  Graph out;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vx = graph.vertex(v);
    if (vx.is_input()) {
      copy[v] = out.input(vx.name, vx.dtype, vx.bound, vx.origin);
    } else if (needed[v]) {
      std::vector<VertexId> operands;
      for (VertexId o : vx.inputs) operands.push_back(copy.at(o));
      copy[v] = out.add_einsum(vx.name, *vx.einsum, operands, vx.origin);
    }
  }
  return out;
}

struct Differentiated {
  Graph graph;
  VertexId loss;
  std::vector<VertexId> wrt, grads;
};

Differentiated differentiate(const Graph& graph, std::string_view loss, const std::vector<std::string>& wrt) {
  const auto l = graph.find(loss);
  if (!l) throw Error("gradient: the graph has no vertex named '" + std::string(loss) + "' (the loss)");
  std::map<VertexId, VertexId> copy;
  Differentiated d{loss_subgraph(graph, *l, copy), copy.at(*l), {}, {}};
  for (const std::string& name : wrt) {
    const auto w = graph.find(name);
    if (!w) throw Error("gradient: the graph has no input named '" + name + "' to differentiate with respect to");
    if (!graph.vertex(*w).is_input()) throw not_an_input(name);
    d.wrt.push_back(copy.at(*w));
  }
  d.grads = append_gradient(d.graph, d.loss, d.wrt);
  return d;
}

}  // namespace

Graph gradient_graph(const Graph& graph, std::string_view loss, const std::vector<std::string>& wrt) {
  Differentiated d = differentiate(graph, loss, wrt);
  d.graph.output(d.loss);
  for (VertexId g : d.grads) d.graph.output(g);
  return std::move(d.graph);
}

SgdStep sgd_step_graph(const Graph& graph, std::string_view loss, const std::vector<std::string>& params, double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) throw Error("the learning rate must be a finite number > 0");
  Differentiated d = differentiate(graph, loss, params);
  SgdStep step{std::move(d.graph), d.loss, {}};
  Graph& g = step.graph;
  for (std::size_t k = 0; k < d.wrt.size(); ++k) {
    const Vertex& w = g.vertex(d.wrt[k]);
    const std::string name = w.name, all = canonical_labels(w.bound.size());
    for (const std::string& taken : {name + "__step", name + "__next"})
      if (g.find(taken)) throw Error("train: the graph already has a vertex named '" + taken + "'; rename it");
    EinSum scaled;
    scaled.inputs = {all};
    scaled.output = all;
    scaled.map = {MapKind::scale, lr};
    const VertexId s = g.add_einsum(name + "__step", scaled, {d.grads[k]});
    EinSum update;
    update.inputs = {all, all};
    update.output = all;
    update.join = JoinOp::sub;
    step.carried.emplace_back(d.wrt[k], g.add_einsum(name + "__next", update, {d.wrt[k], s}));
  }
  g.output(step.loss);
  for (const auto& [w, next] : step.carried) g.output(next);
  return step;
}

}  // namespace einrel
