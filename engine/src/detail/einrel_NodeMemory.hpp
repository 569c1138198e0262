#ifndef EINREL_NODEMEMORY_HPP
#define EINREL_NODEMEMORY_HPP

#include <mpi.h>

#include <cstddef>
#include <optional>

// The memory a node's ranks draw on, and the check that a plan's estimate fits in it.

namespace einrel::engine {

// The memory this host can still give out: MemAvailable of /proc/meminfo, else the free physical pages.
std::size_t available_host_memory();

// The free memory of the CUDA device this process uses (cudaMemGetInfo) and its number; nullopt without
// the Cuda backend.
struct DeviceMemory {
  int device = 0;
  std::size_t free_bytes = 0;
};
std::optional<DeviceMemory> available_cuda_memory();

// Collective over comm: throws Error on every rank, before anything is allocated, when the ranks that share
// a node (MPI_COMM_TYPE_SHARED) together need more than available_host_memory() there, each rank needing
// `estimate` bytes (its dry-run peak_memory_bytes); with `device`, when the ranks that share a node and a
// CUDA device need more than available_cuda_memory() (no check where that is nullopt). The message gives
// the bytes needed and available.
void check_node_memory(MPI_Comm comm, std::size_t estimate, bool device = false);

}  // namespace einrel::engine

#endif
