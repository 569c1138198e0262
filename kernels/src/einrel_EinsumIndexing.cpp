#include <einrel_EinsumIndexing.hpp>
#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

namespace einrel::kernels {
namespace {

// Stride of `label` in a C-order tensor with these labels and bound, 0 if it does not carry the label.
Extent stride_of(char label, const std::string& labels, const Bound& bound) {
  const auto pos = labels.find(label);
  if (pos == std::string::npos) return 0;
  return c_order_strides(bound)[pos];
}

Extent extent_of(char label, const EinSum& e, const Bound& x_bound, const Bound& y_bound) {
  if (auto pos = e.inputs[0].find(label); pos != std::string::npos) return x_bound.at(pos);
  return y_bound.at(e.inputs.at(1).find(label));
}

}  // namespace

EinsumIndexing make_indexing(const EinSum& e, const Bound& x_bound, const Bound& y_bound) {
  const std::string agg = e.aggregated_labels();
  if (static_cast<int>(e.output.size() + agg.size()) > max_labels)
    throw Error("einsum '" + e.equation() + "' uses more than " + std::to_string(max_labels) + " labels");
  const std::string y_labels = e.arity() > 1 ? e.inputs[1] : std::string();
  EinsumIndexing ix;
  for (char c : e.output) {
    ix.free_extent[ix.num_free] = extent_of(c, e, x_bound, y_bound);
    ix.free_x[ix.num_free] = stride_of(c, e.inputs[0], x_bound);
    ix.free_y[ix.num_free] = stride_of(c, y_labels, y_bound);
    ++ix.num_free;
  }
  for (char c : agg) {
    ix.agg_extent[ix.num_agg] = extent_of(c, e, x_bound, y_bound);
    ix.agg_x[ix.num_agg] = stride_of(c, e.inputs[0], x_bound);
    ix.agg_y[ix.num_agg] = stride_of(c, y_labels, y_bound);
    ix.agg_size *= ix.agg_extent[ix.num_agg];
    ++ix.num_agg;
  }
  return ix;
}

}  // namespace einrel::kernels
