#ifndef EINREL_SIMDGENERIC_HPP
#define EINREL_SIMDGENERIC_HPP

// The vectorised micro-kernels of the generic ⊗/⊕ kernel for the common op pairs, on x86-64 hosts, free
// of Kokkos (einrel_SimdIsa.hpp); einrel_SimdGenericLaunch.hpp packs the operands and runs them over Kokkos.

#include <einrel_Bound.hpp>
#include <einrel_SimdIsa.hpp>

namespace einrel::kernels::simd {

// The (⊗, ⊕) pairs with a vector kernel (identity map): distance matrices, tropical and max-product.
enum class Pair { sqdiff_sum, add_max, add_min, mul_max };

// The register tile of a micro-kernel: mr rows of X by nr columns of Y.
struct PanelShape {
  int mr, nr;
};
template <class Scalar>
PanelShape panel_shape(Isa isa);

// Rows and columns of Z that one compute_block call covers at most: a multiple of every mr and nr.
inline constexpr int block = 96;

// With X packed in m-panels of mr rows, each [k][mr], and Y in n-panels of nr columns, each [k][nr]
// (panel_shape(isa); rows past the operand's end hold anything finite), computes for m_panels panels
// from xp and n_panels from yp c[r * block + q] = ⊕_t ⊗(X[r][t], Y[q][t]) over t = 0..k-1, folded in
// order from t = 0 like the scalar functor. Needs k >= 1, m_panels * mr <= block, n_panels * nr <= block.
template <class Scalar>
void compute_block(Isa isa, Pair pair, const Scalar* xp, const Scalar* yp, Extent k, int m_panels, int n_panels,
                   Scalar* c);

namespace detail {

// The register tiles, mr rows by nv vectors of Y: as many accumulators as the vector registers hold
// beside the nv Y vectors, the broadcast X value and a temporary (32 zmm registers, 16 ymm).
inline constexpr int avx512_mr = 8, avx512_nv = 3, avx2_mr = 6, avx2_nv = 2;

// Each ISA's kernels (einrel_SimdGenericAvx512.cpp, einrel_SimdGenericAvx2.cpp), as compute_block.
void compute_block_avx512(Pair pair, const double* xp, const double* yp, Extent k, int m_panels, int n_panels,
                          double* c);
void compute_block_avx512(Pair pair, const float* xp, const float* yp, Extent k, int m_panels, int n_panels, float* c);
void compute_block_avx2(Pair pair, const double* xp, const double* yp, Extent k, int m_panels, int n_panels, double* c);
void compute_block_avx2(Pair pair, const float* xp, const float* yp, Extent k, int m_panels, int n_panels, float* c);

}  // namespace detail

}  // namespace einrel::kernels::simd

#endif
