// The AVX-512F kernels (einrel_SimdGeneric.hpp), whatever the build's -march: called only where the
// running CPU has AVX-512F (simd::supported_isas).
#include <einrel_SimdGeneric.hpp>

#if EINREL_SIMD_X86
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns inside its own AVX-512 header (_mm512_undefined_*, GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#define EINREL_SIMD_TARGET __attribute__((target("avx512f")))
#include <einrel_SimdGenericKernel.hpp>

namespace einrel::kernels::simd::detail {
namespace {
EINREL_SIMD_VECTOR(F64x8, double, __m512d, _mm512, pd)
EINREL_SIMD_VECTOR(F32x16, float, __m512, _mm512, ps)
}  // namespace

EINREL_SIMD_ENTRIES(avx512, F64x8, F32x16)

}  // namespace einrel::kernels::simd::detail
#endif
