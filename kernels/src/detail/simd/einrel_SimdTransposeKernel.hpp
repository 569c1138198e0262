#ifndef EINREL_SIMDTRANSPOSEKERNEL_HPP
#define EINREL_SIMDTRANSPOSEKERNEL_HPP

// The tile loop of einrel_SimdTranspose.hpp, written once for any vector type and in-register block
// transpose (see einrel_SimdIsaUnit.hpp for how an ISA's translation unit includes it).

#include <einrel_SimdIsaUnit.hpp>
#include <einrel_SimdTranspose.hpp>

#include <cstdint>

namespace einrel::kernels::simd::detail {
namespace {

enum class Store { plain, stream, add };

// t[i], t[i + 1] = unpacklo, unpackhi of rows i and i + 1 of `in`: the first step of every in-register
// transpose here (columns 0 2 and 1 3 of two rows of 4 doubles, 0 1 4 5 and 2 3 6 7 of 8 floats).
template <class V, int rows>
EINREL_SIMD_TARGET void interleave_rows(const typename V::Scalar* in, Extent stride, typename V::type (&t)[rows]) {
#pragma GCC unroll 16
  for (int i = 0; i < rows; i += 2) {
    const typename V::type a = V::load(in + i * stride), b = V::load(in + (i + 1) * stride);
    t[i] = V::unpacklo(a, b);
    t[i + 1] = V::unpackhi(a, b);
  }
}

// AVX2's vectors and in-register transposes, which every ISA here has.
EINREL_SIMD_VECTOR(F64x4, double, __m256d, _mm256, pd)
EINREL_SIMD_VECTOR(F32x8, float, __m256, _mm256, ps)

// 4 x 4 doubles: rows interleaved in pairs, then 128-bit halves exchanged.
struct TransposeF64x4 {
  using Vector = F64x4;
  static constexpr int columns = 4;
  EINREL_SIMD_TARGET static void transpose(const double* in, Extent stride, __m256d (&o)[4]) {
    __m256d t[4];
    interleave_rows<F64x4>(in, stride, t);
#pragma GCC unroll 4
    for (int i = 0; i < 2; ++i) {  // columns i and i + 2
      o[i] = _mm256_permute2f128_pd(t[i], t[i + 2], 0x20);
      o[i + 2] = _mm256_permute2f128_pd(t[i], t[i + 2], 0x31);
    }
  }
};

// 8 x 8 floats: rows interleaved in pairs, pairs of columns gathered, then 128-bit halves exchanged.
struct TransposeF32x8 {
  using Vector = F32x8;
  static constexpr int columns = 8;
  EINREL_SIMD_TARGET static void transpose(const float* in, Extent stride, __m256 (&o)[8]) {
    __m256 t[8], s[8];
    interleave_rows<F32x8>(in, stride, t);
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) {  // s[c]: columns c and c + 4 of rows 0-3, s[c + 4]: of rows 4-7
      const int j = i % 2 + 4 * (i / 2);
      s[2 * i] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
      s[2 * i + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) {  // columns i and i + 4
      o[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
      o[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
  }
};

// Block::transpose(in, in_stride, rows) loads V::width rows of Block::columns elements from `in` and
// returns the columns in rows[], which land in Block::columns rows of out. The blocks go through the tile
// a cache line of input columns at a time, left to right within it: each input line is used up by
// successive blocks and each output line completed by them, for rows a power of two apart share L1
// sets (a line left for later is gone by then).
template <class V, class Block, Store store>
EINREL_SIMD_TARGET void transpose_blocks(const typename V::Scalar* in, Extent in_stride, typename V::Scalar* out,
                                         Extent out_stride, int full_a, int full_b) {
  constexpr int line = 64 / sizeof(typename V::Scalar);
  typename V::type rows[Block::columns];
  for (int x0 = 0; x0 < full_a; x0 += line)
    for (int y = 0; y < full_b; y += V::width)
      for (int x = x0; x < x0 + line && x < full_a; x += Block::columns) {
        Block::transpose(in + y * in_stride + x, in_stride, rows);
        typename V::Scalar* dst = out + x * out_stride + y;
#pragma GCC unroll 16
        for (int j = 0; j < Block::columns; ++j) {
          typename V::Scalar* row = dst + j * out_stride;
          if constexpr (store == Store::add)
            V::store(row, V::add(V::load(row), rows[j]));
          else if constexpr (store == Store::stream)
            V::stream(row, rows[j]);
          else
            V::store(row, rows[j]);
        }
      }
}

template <class V, class Block>
EINREL_SIMD_TARGET void transpose_tile_with(const typename V::Scalar* in, Extent in_stride, typename V::Scalar* out,
                                            Extent out_stride, int na, int nb, bool add, bool stream) {
  using Scalar = typename V::Scalar;
  const int full_a = na - na % Block::columns, full_b = nb - nb % V::width;
  stream = stream && !add && reinterpret_cast<std::uintptr_t>(out) % 64 == 0 && out_stride * sizeof(Scalar) % 64 == 0;
  if (add)
    transpose_blocks<V, Block, Store::add>(in, in_stride, out, out_stride, full_a, full_b);
  else if (stream)
    transpose_blocks<V, Block, Store::stream>(in, in_stride, out, out_stride, full_a, full_b);
  else
    transpose_blocks<V, Block, Store::plain>(in, in_stride, out, out_stride, full_a, full_b);
  for (int x = 0; x < na; ++x)
    for (int y = x < full_a ? full_b : 0; y < nb; ++y) {
      const Scalar v = in[y * in_stride + x];
      Scalar& o = out[x * out_stride + y];
      o = add ? o + v : v;
    }
  // Non-temporal stores are weakly ordered: make them visible before the kernel is done.
  if (stream) _mm_sfence();
}

}  // namespace
}  // namespace einrel::kernels::simd::detail

#endif
