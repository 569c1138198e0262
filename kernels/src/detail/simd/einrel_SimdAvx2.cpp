// The AVX2+FMA kernels (einrel_SimdGeneric.hpp, einrel_SimdTranspose.hpp), whatever the build's -march:
// called only where the running CPU has AVX2 and FMA (simd::supported_isas).
#include <einrel_SimdGeneric.hpp>
#include <einrel_SimdTranspose.hpp>

#if EINREL_SIMD_X86
#include <immintrin.h>

#define EINREL_SIMD_TARGET __attribute__((target("avx2,fma")))
#include <einrel_SimdGenericKernel.hpp>
#include <einrel_SimdTransposeKernel.hpp>

namespace einrel::kernels::simd::detail {
EINREL_SIMD_ENTRIES(avx2, F64x4, F32x8, TransposeF64x4, TransposeF32x8)
}  // namespace einrel::kernels::simd::detail
#endif
