#ifndef EINREL_SIMDISAUNIT_HPP
#define EINREL_SIMDISAUNIT_HPP

// How each ISA's translation unit (einrel_SimdAvx2.cpp, einrel_SimdAvx512.cpp) is put together: it
// includes <immintrin.h>, defines EINREL_SIMD_TARGET (the target attribute every kernel function
// carries), includes the kernel bodies (einrel_SimdGenericKernel.hpp, einrel_SimdTransposeKernel.hpp),
// names its vector types with EINREL_SIMD_VECTOR and its in-register transposes, all with internal
// linkage (so that the linker never merges a function compiled for one ISA with its namesake compiled
// for another), and defines its entry points with EINREL_SIMD_ENTRIES.

// A vector type V: its scalar, width and the intrinsics the kernels use, which differ between
// ISAs and dtypes only in their prefix (_mm256, _mm512) and suffix (pd, ps).
#define EINREL_SIMD_VECTOR(NAME, SCALAR, TYPE, PREFIX, SUFFIX)                                                \
  struct NAME {                                                                                               \
    using Scalar = SCALAR;                                                                                    \
    using type = TYPE;                                                                                        \
    static constexpr int width = sizeof(TYPE) / sizeof(SCALAR);                                               \
    EINREL_SIMD_TARGET static type load(const Scalar* p) { return PREFIX##_loadu_##SUFFIX(p); }               \
    EINREL_SIMD_TARGET static void store(Scalar* p, type v) { PREFIX##_storeu_##SUFFIX(p, v); }               \
    /* a non-temporal store, to an address aligned to the vector's size */                                    \
    EINREL_SIMD_TARGET static void stream(Scalar* p, type v) { PREFIX##_stream_##SUFFIX(p, v); }              \
    EINREL_SIMD_TARGET static type broadcast(Scalar s) { return PREFIX##_set1_##SUFFIX(s); }                  \
    EINREL_SIMD_TARGET static type unpacklo(type a, type b) { return PREFIX##_unpacklo_##SUFFIX(a, b); }      \
    EINREL_SIMD_TARGET static type unpackhi(type a, type b) { return PREFIX##_unpackhi_##SUFFIX(a, b); }      \
    EINREL_SIMD_TARGET static type add(type a, type b) { return PREFIX##_add_##SUFFIX(a, b); }                \
    EINREL_SIMD_TARGET static type sub(type a, type b) { return PREFIX##_sub_##SUFFIX(a, b); }                \
    EINREL_SIMD_TARGET static type mul(type a, type b) { return PREFIX##_mul_##SUFFIX(a, b); }                \
    EINREL_SIMD_TARGET static type fmadd(type a, type b, type c) { return PREFIX##_fmadd_##SUFFIX(a, b, c); } \
    /* max(a, b) = a > b ? a : b and min(a, b) = a < b ? a : b: b where either is NaN */                      \
    EINREL_SIMD_TARGET static type max(type a, type b) { return PREFIX##_max_##SUFFIX(a, b); }                \
    EINREL_SIMD_TARGET static type min(type a, type b) { return PREFIX##_min_##SUFFIX(a, b); }                \
  };

// The ISA's entry points of einrel_SimdGeneric.hpp and einrel_SimdTranspose.hpp, from its vector types
// F64 and F32, register tile ISA##_mr x ISA##_nv and in-register transposes T64 and T32.
#define EINREL_SIMD_ENTRIES(ISA, F64, F32, T64, T32)                                                            \
  void compute_block_##ISA(Pair pair, const double* xp, const double* yp, Extent k, int m_panels, int n_panels, \
                           double* c) {                                                                         \
    compute<F64, ISA##_mr, ISA##_nv>(pair, xp, yp, k, m_panels, n_panels, c);                                   \
  }                                                                                                             \
  void compute_block_##ISA(Pair pair, const float* xp, const float* yp, Extent k, int m_panels, int n_panels,   \
                           float* c) {                                                                          \
    compute<F32, ISA##_mr, ISA##_nv>(pair, xp, yp, k, m_panels, n_panels, c);                                   \
  }                                                                                                             \
  void transpose_tile_##ISA(const double* in, Extent in_stride, double* out, Extent out_stride, int na, int nb, \
                            bool add, bool stream) {                                                            \
    transpose_tile_with<F64, T64>(in, in_stride, out, out_stride, na, nb, add, stream);                         \
  }                                                                                                             \
  void transpose_tile_##ISA(const float* in, Extent in_stride, float* out, Extent out_stride, int na, int nb,   \
                            bool add, bool stream) {                                                            \
    transpose_tile_with<F32, T32>(in, in_stride, out, out_stride, na, nb, add, stream);                         \
  }

#endif
