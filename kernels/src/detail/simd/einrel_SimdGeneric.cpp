// The generic ⊗/⊕ micro-kernels' panel shapes and the call into the ISA's kernels.
#include <einrel_Error.hpp>
#include <einrel_SimdGeneric.hpp>

#include <string>

namespace einrel::kernels::simd {

template <class Scalar>
PanelShape panel_shape(Isa isa) {
  const int vector_bytes = isa == Isa::avx512 ? 64 : 32, width = vector_bytes / static_cast<int>(sizeof(Scalar));
  return isa == Isa::avx512 ? PanelShape{detail::avx512_mr, detail::avx512_nv * width}
                            : PanelShape{detail::avx2_mr, detail::avx2_nv * width};
}

template <class Scalar>
void compute_block(Isa isa, Pair pair, const Scalar* xp, const Scalar* yp, Extent k, int m_panels, int n_panels,
                   Scalar* c) {
#if EINREL_SIMD_X86
  if (isa == Isa::avx512)
    detail::compute_block_avx512(pair, xp, yp, k, m_panels, n_panels, c);
  else
    detail::compute_block_avx2(pair, xp, yp, k, m_panels, n_panels, c);
#else
  (void)pair, (void)xp, (void)yp, (void)k, (void)m_panels, (void)n_panels, (void)c;
  throw Error(std::string("simd::compute_block: this build has no ") + isa_name(isa) + " kernels");
#endif
}

template PanelShape panel_shape<float>(Isa);
template PanelShape panel_shape<double>(Isa);
template void compute_block(Isa, Pair, const float*, const float*, Extent, int, int, float*);
template void compute_block(Isa, Pair, const double*, const double*, Extent, int, int, double*);

}  // namespace einrel::kernels::simd
