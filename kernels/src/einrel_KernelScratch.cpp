#include <einrel_BlockedGeneric.hpp>
#include <einrel_Contraction.hpp>
#include <einrel_ContractionPlan.hpp>
#include <einrel_EinsumKernel.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_SimdGenericLaunch.hpp>

namespace einrel::kernels {

std::vector<Extent> einsum_scratch(const ResolvedEinSum& resolved, bool accumulate, const KernelTarget& target) {
  const EinSum& e = resolved.einsum();
  const Extent outputs = num_elements(resolved.output_bound());
  std::vector<Extent> scratch;
  auto add = [&](const std::string& labels) { scratch.push_back(num_elements(resolved.extents(labels))); };
  if (e.arity() == 2) {
    const ContractionPlan p = plan_contraction(resolved, target.strided_batches && e.is_contraction());
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
      const bool direct = e.output == p.batch + p.m + p.n;
      if (!direct) add(e.output);
      if (const std::optional<simd::Isa> isa = simd::best_isa();
          target.host && isa && simd_pair(e.join, e.agg, e.map)) {
        const PanelElements panels = target.dtype == Dtype::f32
                                         ? panel_elements<float>(*isa, p.batch_size, p.m_size, p.n_size, p.k_size)
                                         : panel_elements<double>(*isa, p.batch_size, p.m_size, p.n_size, p.k_size);
        scratch.push_back(panels.x);
        scratch.push_back(panels.y);
      }
      if (!direct && accumulate && e.agg != AggOp::sum) add(e.output);
      return scratch;
    }
  }
  const EinsumIndexing ix = make_indexing(resolved);
  if (!detail::use_rows(ix, accumulate, outputs)) {
    const Extent chunks = detail::fold_chunks(outputs, ix.agg_size, target.threads);
    if (chunks > 1) scratch.push_back(outputs * chunks);
  }
  return scratch;
}

std::optional<GemmCall> vendor_gemm_call(const ResolvedEinSum& resolved, const KernelTarget& target) {
  const EinSum& e = resolved.einsum();
  if (e.arity() != 2 || !e.is_contraction()) return std::nullopt;
  const ContractionPlan p = plan_contraction(resolved, target.strided_batches);
  // On a device every batch is one strided-batched vendor call (einrel_CublasGemm.hpp).
  if (!detail::use_gemm(p) ||
      (target.host && detail::many_small_gemms(p.batch_size, p.m_size, p.n_size, p.k_size, target.threads)))
    return std::nullopt;
  return p.z_transposed ? GemmCall{p.n_size, p.m_size, p.k_size, true} : GemmCall{p.m_size, p.n_size, p.k_size, false};
}

}  // namespace einrel::kernels
