// Explicit instantiations of the blocked generic kernel for every enabled backend and both dtypes.
#include <einrel_BlockedGenericLaunch.hpp>

namespace einrel::kernels {

#define EINREL_BLOCKED_GENERIC_ETI(SPACE)                                                                    \
  template void launch_blocked_generic<SPACE, float>(const SPACE&,                                           \
                                                     const BlockedGenericArgs<float, SPACE::memory_space>&); \
  template void launch_blocked_generic<SPACE, double>(const SPACE&,                                          \
                                                      const BlockedGenericArgs<double, SPACE::memory_space>&);

#ifdef KOKKOS_ENABLE_SERIAL
EINREL_BLOCKED_GENERIC_ETI(Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
EINREL_BLOCKED_GENERIC_ETI(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
EINREL_BLOCKED_GENERIC_ETI(Kokkos::Cuda)
#endif

}  // namespace einrel::kernels
