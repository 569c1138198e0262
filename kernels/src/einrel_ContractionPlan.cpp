#include <einrel_ContractionPlan.hpp>
#include <einrel_Error.hpp>

#include <optional>
#include <vector>

namespace einrel::kernels {
namespace {

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// The labels of `from` that belong to `group`, in from's order.
std::string in_order(const std::string& from, const std::string& group) {
  std::string s;
  for (char c : from)
    if (has(group, c)) s += c;
  return s;
}

// Distinct orders of a group as the given tensors store it.
std::vector<std::string> candidate_orders(const std::string& group, const std::vector<std::string>& tensors) {
  std::vector<std::string> orders;
  for (const auto& t : tensors) {
    const std::string o = in_order(t, group);
    bool seen = false;
    for (const auto& p : orders) seen = seen || p == o;
    if (!seen) orders.push_back(o);
  }
  return orders;
}

}  // namespace

Extent ContractionPlan::packed_elements(const Bound& x, const Bound& y, const Bound& z) const {
  return (pack_x ? num_elements(x) : 0) + (pack_y ? num_elements(y) : 0) + (pack_z ? num_elements(z) : 0);
}

ContractionPlan plan_contraction(const ResolvedEinSum& resolved) {
  const EinSum& e = resolved.einsum();
  if (e.arity() != 2) throw Error("plan_contraction: '" + e.equation() + "' is not a binary einsum");
  const std::string &lx = e.inputs[0], &ly = e.inputs[1], &lz = e.output;

  ContractionPlan p;
  for (char c : resolved.unique_labels()) {
    const bool in_x = has(lx, c), in_y = has(ly, c), in_z = has(lz, c);
    std::string& group = in_x && in_y ? (in_z ? p.batch : p.k)
                         : in_x       ? (in_z ? p.m : p.x_only)
                                      : (in_z ? p.n : p.y_only);
    group += c;
  }
  for (char c : lx)
    if (!has(p.x_only, c)) p.x_labels += c;
  for (char c : ly)
    if (!has(p.y_only, c)) p.y_labels += c;
  auto size = [&](const std::string& g) {
    Extent s = 1;
    for (char c : g) s *= resolved.extent(c);
    return s;
  };

  // Try every combination of stored group orders; keep the one that packs the fewest elements.
  const Bound xb = resolved.extents(p.x_labels), yb = resolved.extents(p.y_labels);
  const Bound& zb = resolved.output_bound();
  std::optional<ContractionPlan> best;
  Extent best_cost = 0;
  for (const auto& b : candidate_orders(p.batch, {lz, p.x_labels, p.y_labels}))
    for (const auto& m : candidate_orders(p.m, {lz, p.x_labels}))
      for (const auto& n : candidate_orders(p.n, {lz, p.y_labels}))
        for (const auto& k : candidate_orders(p.k, {p.x_labels, p.y_labels})) {
          ContractionPlan c = p;
          c.batch = b;
          c.m = m;
          c.n = n;
          c.k = k;
          // In place when the stored order is one of the two GEMM forms; packed otherwise, into the form
          // that keeps the stored last label last, so the permutation copies contiguous rows when it can.
          const bool x_as_is = p.x_labels == b + m + k || p.x_labels == b + k + m;
          c.pack_x = !x_as_is;
          c.trans_x = !k.empty() && !m.empty() && (x_as_is ? p.x_labels == b + k + m : has(m, p.x_labels.back()));
          c.x_gemm = c.trans_x ? b + k + m : b + m + k;
          const bool y_as_is = p.y_labels == b + k + n || p.y_labels == b + n + k;
          c.pack_y = !y_as_is;
          c.trans_y = !k.empty() && !n.empty() && (y_as_is ? p.y_labels == b + n + k : has(k, p.y_labels.back()));
          c.y_gemm = c.trans_y ? b + n + k : b + k + n;
          const bool z_as_is = lz == b + m + n || lz == b + n + m;
          c.pack_z = !z_as_is;
          c.z_transposed = !m.empty() && !n.empty() && (z_as_is ? lz == b + n + m : has(m, lz.back()));
          c.z_gemm = c.z_transposed ? b + n + m : b + m + n;
          const Extent cost = c.packed_elements(xb, yb, zb);
          if (!best || cost < best_cost) {
            best = c;
            best_cost = cost;
          }
        }
  ContractionPlan r = *best;
  r.batch_size = size(r.batch);
  r.m_size = size(r.m);
  r.n_size = size(r.n);
  r.k_size = size(r.k);
  return r;
}

}  // namespace einrel::kernels
