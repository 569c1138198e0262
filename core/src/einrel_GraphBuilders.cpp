#include <einrel_GraphBuilders.hpp>

#include <cmath>

namespace einrel::builders {
namespace {

EinsumOptions named(const std::string& name) {
  EinsumOptions o;
  o.name = name;
  return o;
}

EinsumOptions joined(const std::string& name, JoinOp join) {
  EinsumOptions o = named(name);
  o.join = join;
  return o;
}

EinsumOptions mapped(const std::string& name, MapKind map, double c = 0) {
  EinsumOptions o = named(name);
  o.map = {map, c};
  return o;
}

// x [s,a] · (mean_a x² + eps)^(-1/2) · g[a], with g an input named `name`.
VertexId rms_norm(Graph& g, VertexId x, double eps, const std::string& name) {
  const Extent a = g.vertex(x).bound.at(1);
  const VertexId gain = g.input(name, g.vertex(x).dtype, {a});
  const VertexId squares = g.einsum("sa->s", x, mapped(name + "_ss", MapKind::square));
  const VertexId mean = g.einsum("s->s", squares, mapped(name + "_ms", MapKind::scale, 1.0 / static_cast<double>(a)));
  const VertexId shifted = g.einsum("s->s", mean, mapped(name + "_eps", MapKind::shift, eps));
  const VertexId inverse = g.einsum("s->s", shifted, mapped(name + "_rs", MapKind::pow, -0.5));
  const VertexId scaled = g.einsum("sa,s->sa", x, inverse, named(name + "_xs"));
  return g.einsum("sa,a->sa", scaled, gain, named(name + "_out"));
}

// Rotary position embedding of q [s,h,d]: q·cos + (q·rot)·sin.
VertexId rope(Graph& g, VertexId q, VertexId cos, VertexId sin, VertexId rot, const std::string& name) {
  const VertexId rotated = g.einsum("shd,de->she", q, rot, named(name + "_rot"));
  const VertexId c = g.einsum("shd,sd->shd", q, cos, named(name + "_cos"));
  const VertexId s = g.einsum("shd,sd->shd", rotated, sin, named(name + "_sin"));
  return g.einsum("shd,shd->shd", c, s, joined(name, JoinOp::add));
}

}  // namespace

VertexId matrix_chain(Graph& g, const std::vector<Extent>& dims, Dtype dtype, const std::string& prefix) {
  if (dims.size() < 3) throw Error("a matrix chain needs at least three dimensions (two matrices)");
  VertexId acc = g.input(prefix + "M0", dtype, {dims[0], dims[1]});
  for (std::size_t k = 1; k + 1 < dims.size(); ++k) {
    const VertexId m = g.input(prefix + "M" + std::to_string(k), dtype, {dims[k], dims[k + 1]});
    acc = g.einsum("ij,jk->ik", acc, m, named(prefix + "P" + std::to_string(k)));
  }
  return acc;
}

VertexId matrix_chain_program(Graph& g, Extent s, bool skewed, Dtype dtype, const std::string& prefix) {
  if (skewed && s < 10) throw Error("the skewed matrix chain needs a scale of at least 10, got " + std::to_string(s));
  const Extent small = skewed ? s / 10 : s, large = skewed ? 10 * s : s;
  const VertexId a = g.input(prefix + "A", dtype, {s, small});
  const VertexId b = g.input(prefix + "B", dtype, {small, s});
  const VertexId c = g.input(prefix + "C", dtype, {s, small});
  const VertexId d = g.input(prefix + "D", dtype, {small, large});
  const VertexId e = g.input(prefix + "E", dtype, {large, s});
  const VertexId ab = g.einsum("ij,jk->ik", a, b, named(prefix + "AB"));
  const VertexId de = g.einsum("ij,jk->ik", d, e, named(prefix + "DE"));
  const VertexId cde = g.einsum("ij,jk->ik", c, de, named(prefix + "CDE"));
  return g.einsum("ij,ij->ij", ab, cde, joined(prefix + "R", JoinOp::add));
}

VertexId multi_head_attention(Graph& g, VertexId q, VertexId k, VertexId v, const AttentionShape& shape,
                              const std::string& prefix) {
  const Dtype dtype = g.vertex(q).dtype;
  const Bound weight{shape.attribute, shape.heads, shape.head_dim};
  const VertexId wq = g.input(prefix + "WQ", dtype, weight);
  const VertexId wk = g.input(prefix + "WK", dtype, weight);
  const VertexId wv = g.input(prefix + "WV", dtype, weight);
  const VertexId wo = g.input(prefix + "WO", dtype, weight);
  const VertexId qh = g.einsum("sa,ahd->shd", q, wq, named(prefix + "QH"));
  const VertexId kh = g.einsum("sa,ahd->shd", k, wk, named(prefix + "KH"));
  const VertexId vh = g.einsum("sa,ahd->shd", v, wv, named(prefix + "VH"));
  const VertexId t1 = g.einsum("shd,thd->hst", qh, kh, named(prefix + "T1"));
  EinsumOptions scaled = named(prefix + "T2");
  scaled.map = {MapKind::scale, 1.0 / std::sqrt(static_cast<double>(shape.head_dim))};
  const VertexId t2 = g.einsum("hst->hst", t1, scaled);
  const VertexId t3 = g.softmax(t2, prefix + "T3");
  const VertexId o = g.einsum("hst,thd->shd", t3, vh, named(prefix + "O"));
  return g.einsum("shd,ahd->sa", o, wo, named(prefix + "Y"));
}

VertexId feed_forward(Graph& g, VertexId x, Extent hidden, const std::string& prefix) {
  const Dtype dtype = g.vertex(x).dtype;
  const Extent a = g.vertex(x).bound.at(1);
  const VertexId w1 = g.input(prefix + "W1", dtype, {a, hidden});
  const VertexId b1 = g.input(prefix + "b1", dtype, {hidden});
  const VertexId w2 = g.input(prefix + "W2", dtype, {hidden, a});
  const VertexId b2 = g.input(prefix + "b2", dtype, {a});
  const VertexId xw = g.einsum("sa,af->sf", x, w1, named(prefix + "XW1"));
  EinsumOptions activation = joined(prefix + "H", JoinOp::add);
  activation.map = {MapKind::relu, 0.0};
  const VertexId h = g.einsum("sf,f->sf", xw, b1, activation);
  const VertexId hw = g.einsum("sf,fa->sa", h, w2, named(prefix + "HW2"));
  return g.einsum("sa,a->sa", hw, b2, joined(prefix + "F", JoinOp::add));
}

VertexId transformer_layer(Graph& g, VertexId x, const AttentionShape& shape, Extent hidden,
                           const std::string& prefix) {
  const VertexId attended = multi_head_attention(g, x, x, x, shape, prefix + "att_");
  const VertexId r1 = g.einsum("sa,sa->sa", x, attended, joined(prefix + "R1", JoinOp::add));
  const VertexId ffn = feed_forward(g, r1, hidden, prefix + "ffn_");
  return g.einsum("sa,sa->sa", r1, ffn, joined(prefix + "R2", JoinOp::add));
}

VertexId llama_layer(Graph& g, VertexId x, const LlamaShape& shape, const std::string& prefix) {
  const Dtype dtype = g.vertex(x).dtype;
  if (g.vertex(x).bound != Bound{shape.sequence, shape.model})
    throw Error("llama_layer: x must be [sequence, model] = [" + std::to_string(shape.sequence) + "," +
                std::to_string(shape.model) + "]");
  const Bound weight{shape.model, shape.heads, shape.head_dim};
  const VertexId wq = g.input(prefix + "WQ", dtype, weight);
  const VertexId wk = g.input(prefix + "WK", dtype, weight);
  const VertexId wv = g.input(prefix + "WV", dtype, weight);
  const VertexId wo = g.input(prefix + "WO", dtype, weight);
  const VertexId cos = g.input(prefix + "cos", dtype, {shape.sequence, shape.head_dim});
  const VertexId sin = g.input(prefix + "sin", dtype, {shape.sequence, shape.head_dim});
  const VertexId rot = g.input(prefix + "rot", dtype, {shape.head_dim, shape.head_dim});
  const VertexId mask = g.input(prefix + "mask", dtype, {shape.sequence, shape.sequence});

  const VertexId xn = rms_norm(g, x, shape.eps, prefix + "attn_norm");
  const VertexId q = g.einsum("sa,ahd->shd", xn, wq, named(prefix + "Q"));
  const VertexId k = g.einsum("sa,ahd->shd", xn, wk, named(prefix + "K"));
  const VertexId v = g.einsum("sa,ahd->shd", xn, wv, named(prefix + "V"));
  const VertexId qr = rope(g, q, cos, sin, rot, prefix + "QR");
  const VertexId kr = rope(g, k, cos, sin, rot, prefix + "KR");
  const VertexId scores = g.einsum("shd,thd->hst", qr, kr, named(prefix + "S"));
  const VertexId scaled =
      g.einsum("hst->hst", scores,
               mapped(prefix + "S_scaled", MapKind::scale, 1.0 / std::sqrt(static_cast<double>(shape.head_dim))));
  const VertexId masked = g.einsum("hst,st->hst", scaled, mask, joined(prefix + "S_masked", JoinOp::add));
  const VertexId probs = g.softmax(masked, prefix + "P");
  const VertexId o = g.einsum("hst,thd->shd", probs, v, named(prefix + "O"));
  const VertexId attended = g.einsum("shd,ahd->sa", o, wo, named(prefix + "attn_out"));
  const VertexId x1 = g.einsum("sa,sa->sa", x, attended, joined(prefix + "X1", JoinOp::add));

  const VertexId wgate = g.input(prefix + "W_gate", dtype, {shape.model, shape.hidden});
  const VertexId wup = g.input(prefix + "W_up", dtype, {shape.model, shape.hidden});
  const VertexId wdown = g.input(prefix + "W_down", dtype, {shape.hidden, shape.model});
  const VertexId xn1 = rms_norm(g, x1, shape.eps, prefix + "ffn_norm");
  const VertexId gate = g.einsum("sa,af->sf", xn1, wgate, named(prefix + "G"));
  const VertexId sig = g.einsum("sf->sf", gate, mapped(prefix + "G_sigmoid", MapKind::sigmoid));
  const VertexId silu = g.einsum("sf,sf->sf", gate, sig, named(prefix + "G_silu"));
  const VertexId up = g.einsum("sa,af->sf", xn1, wup, named(prefix + "U"));
  const VertexId h = g.einsum("sf,sf->sf", silu, up, named(prefix + "H"));
  const VertexId down = g.einsum("sf,fa->sa", h, wdown, named(prefix + "D"));
  return g.einsum("sa,sa->sa", x1, down, joined(prefix + "out", JoinOp::add));
}

}  // namespace einrel::builders
