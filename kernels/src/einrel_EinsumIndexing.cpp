#include <einrel_EinsumIndexing.hpp>
#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

namespace einrel::kernels {

EinsumIndexing make_indexing(const ResolvedEinSum& e) {
  const std::string& output = e.einsum().output;
  const std::string& agg = e.aggregated_labels();
  if (static_cast<int>(output.size() + agg.size()) > max_labels)
    throw Error("einsum '" + e.einsum().equation() + "' uses more than " + std::to_string(max_labels) + " labels");
  std::vector<std::vector<Extent>> strides;  // per operand and dimension, C order
  for (const Bound& b : e.operand_bounds()) strides.push_back(c_order_strides(b));
  // The stride of `label` in operand k, 0 when the operand does not carry it (or there is no operand k).
  auto stride = [&](std::size_t k, char label) -> Extent {
    const std::size_t pos = k < e.arity() ? e.position_in(k, label) : ResolvedEinSum::absent;
    return pos == ResolvedEinSum::absent ? 0 : strides[k][pos];
  };
  EinsumIndexing ix;
  for (char c : output) {
    ix.free_extent[ix.num_free] = e.extent(c);
    ix.free_x[ix.num_free] = stride(0, c);
    ix.free_y[ix.num_free] = stride(1, c);
    ++ix.num_free;
  }
  for (char c : agg) {
    ix.agg_extent[ix.num_agg] = e.extent(c);
    ix.agg_x[ix.num_agg] = stride(0, c);
    ix.agg_y[ix.num_agg] = stride(1, c);
    ix.agg_size *= ix.agg_extent[ix.num_agg];
    ++ix.num_agg;
  }
  return ix;
}

}  // namespace einrel::kernels
