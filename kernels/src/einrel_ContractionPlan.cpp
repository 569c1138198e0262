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

// The forms an operand with matrix groups `first` x `second` (rows x columns of its GEMM, `b` the batch)
// is read in place in: batch first, and with strided batches batch between the two when all three groups
// are non-empty.
bool readable_as(const std::string& stored, const std::string& b, const std::string& first, const std::string& second,
                 bool strided_batches) {
  if (stored == b + first + second) return true;
  return strided_batches && !b.empty() && !first.empty() && !second.empty() && stored == first + b + second;
}

// The leading dimension and batch stride of an operand read in `order` (its labels in storage order) as
// matrices of `rows` x `cols` (groups, each a contiguous run of `order`) per index of `batch`.
void set_strides(const ResolvedEinSum& r, const std::string& order, const std::string& batch, const std::string& rows,
                 const std::string& cols, Extent& ld, Extent& batch_stride) {
  auto stride = [&](char label) {
    Extent s = 1;
    for (std::size_t i = order.find(label) + 1; i < order.size(); ++i) s *= r.extent(order[i]);
    return s;
  };
  Extent cols_size = 1, matrix = 1;
  for (char c : cols) cols_size *= r.extent(c);
  for (char c : rows + cols) matrix *= r.extent(c);
  ld = rows.empty() ? cols_size : stride(rows.back());
  batch_stride = batch.empty() ? matrix : stride(batch.back());
}

}  // namespace

GemmStrides packed_strides(bool trans_a, bool trans_b, Extent rows, Extent cols, Extent inner) {
  return {trans_a ? rows : inner, trans_b ? inner : cols, cols, rows * inner, inner * cols, rows * cols};
}

Extent ContractionPlan::packed_elements(const Bound& x, const Bound& y, const Bound& z) const {
  return (pack_x ? num_elements(x) : 0) + (pack_y ? num_elements(y) : 0) + (pack_z ? num_elements(z) : 0);
}

ContractionPlan plan_contraction(const ResolvedEinSum& resolved, bool strided_batches) {
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
          // In place when the stored order is one of the GEMM forms; packed otherwise, into the form (batch
          // first) that keeps the stored last label last, so the permutation copies contiguous rows when it can.
          auto in_place = [&](const std::string& stored, const std::string& first, const std::string& second) {
            return readable_as(stored, b, first, second, strided_batches);
          };
          const bool x_mk = in_place(p.x_labels, m, k), x_km = in_place(p.x_labels, k, m);
          c.pack_x = !x_mk && !x_km;
          c.trans_x = !k.empty() && !m.empty() && (c.pack_x ? has(m, p.x_labels.back()) : x_km);
          c.x_gemm = !c.pack_x ? p.x_labels : c.trans_x ? b + k + m : b + m + k;
          const bool y_kn = in_place(p.y_labels, k, n), y_nk = in_place(p.y_labels, n, k);
          c.pack_y = !y_kn && !y_nk;
          c.trans_y = !k.empty() && !n.empty() && (c.pack_y ? has(k, p.y_labels.back()) : y_nk);
          c.y_gemm = !c.pack_y ? p.y_labels : c.trans_y ? b + n + k : b + k + n;
          const bool z_mn = in_place(lz, m, n), z_nm = in_place(lz, n, m);
          c.pack_z = !z_mn && !z_nm;
          c.z_transposed = !m.empty() && !n.empty() && (c.pack_z ? has(m, lz.back()) : z_nm);
          c.z_gemm = !c.pack_z ? lz : c.z_transposed ? b + n + m : b + m + n;
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
  set_strides(resolved, r.x_gemm, r.batch, r.trans_x ? r.k : r.m, r.trans_x ? r.m : r.k, r.x_ld, r.x_batch_stride);
  set_strides(resolved, r.y_gemm, r.batch, r.trans_y ? r.n : r.k, r.trans_y ? r.k : r.n, r.y_ld, r.y_batch_stride);
  set_strides(resolved, r.z_gemm, r.batch, r.z_transposed ? r.n : r.m, r.z_transposed ? r.m : r.n, r.z_ld,
              r.z_batch_stride);
  return r;
}

}  // namespace einrel::kernels
