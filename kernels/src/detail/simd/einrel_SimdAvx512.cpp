// The AVX-512F kernels (einrel_SimdGeneric.hpp, einrel_SimdTranspose.hpp), whatever the build's -march:
// called only where the running CPU has AVX-512F (simd::supported_isas).
#include <einrel_SimdGeneric.hpp>
#include <einrel_SimdTranspose.hpp>

#if EINREL_SIMD_X86
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns inside its own AVX-512 header (_mm512_undefined_*, GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

// FMA and AVX2 come with every AVX-512 CPU; the AVX2 transposes serve for floats here too.
#define EINREL_SIMD_TARGET __attribute__((target("avx512f,avx2,fma")))
#include <einrel_SimdGenericKernel.hpp>
#include <einrel_SimdTransposeKernel.hpp>

namespace einrel::kernels::simd::detail {
namespace {

EINREL_SIMD_VECTOR(F64x8, double, __m512d, _mm512, pd)
EINREL_SIMD_VECTOR(F32x16, float, __m512, _mm512, ps)

// One AVX-512 vector from two AVX2 vectors, low half first.
EINREL_SIMD_TARGET __m512d join(__m256d low, __m256d high) {
  return _mm512_insertf64x4(_mm512_castpd256_pd512(low), high, 1);
}
EINREL_SIMD_TARGET __m512 join(__m256 low, __m256 high) {
  return _mm512_castpd_ps(join(_mm256_castps_pd(low), _mm256_castps_pd(high)));
}

// AVX-512 rows from two AVX2 transposes, of the top and the bottom half of the input rows: each output
// row one full cache line (what the non-temporal stores need to pay off).
template <class V, class Half>
struct Stacked {
  static constexpr int columns = Half::columns;
  EINREL_SIMD_TARGET static void transpose(const typename V::Scalar* in, Extent stride,
                                           typename V::type (&o)[columns]) {
    typename Half::Vector::type top[columns], bottom[columns];
    Half::transpose(in, stride, top);
    Half::transpose(in + V::width / 2 * stride, stride, bottom);
#pragma GCC unroll 8
    for (int i = 0; i < columns; ++i) o[i] = join(top[i], bottom[i]);
  }
};
using TransposeF64x8 = Stacked<F64x8, TransposeF64x4>;
using TransposeF32x16 = Stacked<F32x16, TransposeF32x8>;

}  // namespace

EINREL_SIMD_ENTRIES(avx512, F64x8, F32x16, TransposeF64x8, TransposeF32x16)

}  // namespace einrel::kernels::simd::detail
#endif
