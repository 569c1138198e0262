// The AVX2+FMA kernels (einrel_SimdGeneric.hpp), whatever the build's -march: called only where the
// running CPU has AVX2 and FMA (simd::supported_isas).
#include <einrel_SimdGeneric.hpp>

#if EINREL_SIMD_X86
#include <immintrin.h>

#define EINREL_SIMD_TARGET __attribute__((target("avx2,fma")))
#include <einrel_SimdGenericKernel.hpp>

namespace einrel::kernels::simd::detail {
namespace {
EINREL_SIMD_VECTOR(F64x4, double, __m256d, _mm256, pd)
EINREL_SIMD_VECTOR(F32x8, float, __m256, _mm256, ps)
}  // namespace

EINREL_SIMD_ENTRIES(avx2, F64x4, F32x8)

}  // namespace einrel::kernels::simd::detail
#endif
