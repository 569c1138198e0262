// The call into the ISA's transpose kernels.
#include <einrel_Error.hpp>
#include <einrel_SimdTranspose.hpp>

#include <string>

namespace einrel::kernels::simd {

template <class Scalar>
void transpose_tile(Isa isa, const Scalar* in, Extent in_stride, Scalar* out, Extent out_stride, int na, int nb,
                    bool add, bool stream) {
#if EINREL_SIMD_X86
  if (isa == Isa::avx512)
    detail::transpose_tile_avx512(in, in_stride, out, out_stride, na, nb, add, stream);
  else
    detail::transpose_tile_avx2(in, in_stride, out, out_stride, na, nb, add, stream);
#else
  (void)in, (void)in_stride, (void)out, (void)out_stride, (void)na, (void)nb, (void)add, (void)stream;
  throw Error(std::string("simd::transpose_tile: this build has no ") + isa_name(isa) + " kernels");
#endif
}

template void transpose_tile(Isa, const float*, Extent, float*, Extent, int, int, bool, bool);
template void transpose_tile(Isa, const double*, Extent, double*, Extent, int, int, bool, bool);

}  // namespace einrel::kernels::simd
