#include <einrel_BlockedGeneric.hpp>
#include <einrel_ContractionPlan.hpp>
#include <einrel_EinsumKernel.hpp>
#include <einrel_KernelScratch.hpp>

namespace einrel::kernels {

std::vector<Extent> einsum_scratch(const ResolvedEinSum& resolved, bool accumulate, Extent threads) {
  const EinSum& e = resolved.einsum();
  const Extent outputs = num_elements(resolved.output_bound());
  std::vector<Extent> scratch;
  auto add = [&](const std::string& labels) { scratch.push_back(num_elements(resolved.extents(labels))); };
  if (e.arity() == 2) {
    const ContractionPlan p = plan_contraction(resolved);
    if (e.is_contraction() && detail::use_gemm(p)) {  // contract()
      if (p.x_labels != e.inputs[0]) add(p.x_labels);
      if (p.pack_x) add(p.x_gemm);
      if (p.y_labels != e.inputs[1]) add(p.y_labels);
      if (p.pack_y) add(p.y_gemm);
      if (p.pack_z) add(p.z_gemm);
      return scratch;
    }
    if (use_blocked_generic(p)) {  // blocked_generic()
      if (e.inputs[0] != p.batch + p.m + p.k) add(e.inputs[0]);
      if (e.inputs[1] != p.batch + p.n + p.k) add(e.inputs[1]);
      if (e.output != p.batch + p.m + p.n) {
        add(e.output);
        if (accumulate && e.agg != AggOp::sum) add(e.output);
      }
      return scratch;
    }
  }
  const EinsumIndexing ix = make_indexing(resolved);
  if (!detail::use_rows(ix, accumulate, outputs)) {
    const Extent chunks = detail::fold_chunks(outputs, ix.agg_size, threads);
    if (chunks > 1) scratch.push_back(outputs * chunks);
  }
  return scratch;
}

}  // namespace einrel::kernels
