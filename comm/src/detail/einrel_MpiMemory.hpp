#ifndef EINREL_MPIMEMORY_HPP
#define EINREL_MPIMEMORY_HPP

#include <einrel_Config.hpp>

#include <Kokkos_Core.hpp>

namespace einrel::comm {

// Whether MPI reads and writes views of MemorySpace directly: host memory always, device memory only with
// a GPU-aware MPI (the CMake option EINREL_ENABLE_GPU_AWARE_MPI). Otherwise every message is staged
// through a host copy. The one rule every sender and receiver of einrel follows (docs/engine.md).
template <class MemorySpace>
inline constexpr bool mpi_reads_directly =
    EINREL_ENABLE_GPU_AWARE_MPI || Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

}  // namespace einrel::comm

#endif
