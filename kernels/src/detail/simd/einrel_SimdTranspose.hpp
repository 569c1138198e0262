#ifndef EINREL_SIMDTRANSPOSE_HPP
#define EINREL_SIMDTRANSPOSE_HPP

// The vectorised tile of a transposing permutation on x86-64 hosts, free of Kokkos (einrel_SimdIsa.hpp);
// einrel_Permute.hpp runs it over Kokkos.

#include <einrel_Bound.hpp>
#include <einrel_SimdIsa.hpp>

namespace einrel::kernels::simd {

// out[x * out_stride + y] = in[y * in_stride + x] for x < na, y < nb, or out += that with `add`:
// blocks transposed in registers, the ragged rims element by element. `stream`: non-temporal
// stores (without `add`, where out's rows are 64-byte aligned), for outputs that leave the caches anyway.
template <class Scalar>
void transpose_tile(Isa isa, const Scalar* in, Extent in_stride, Scalar* out, Extent out_stride, int na, int nb,
                    bool add, bool stream);

namespace detail {

// Each ISA's kernels (einrel_SimdAvx512.cpp, einrel_SimdAvx2.cpp), as transpose_tile: blocks of 8 x 8
// doubles and 16 x 8 floats in AVX-512 registers, 4 x 4 doubles and 8 x 8 floats in AVX2 registers.
void transpose_tile_avx512(const double* in, Extent in_stride, double* out, Extent out_stride, int na, int nb, bool add,
                           bool stream);
void transpose_tile_avx512(const float* in, Extent in_stride, float* out, Extent out_stride, int na, int nb, bool add,
                           bool stream);
void transpose_tile_avx2(const double* in, Extent in_stride, double* out, Extent out_stride, int na, int nb, bool add,
                         bool stream);
void transpose_tile_avx2(const float* in, Extent in_stride, float* out, Extent out_stride, int na, int nb, bool add,
                         bool stream);

}  // namespace detail
}  // namespace einrel::kernels::simd

#endif
