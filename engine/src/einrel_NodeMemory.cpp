#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>
#include <einrel_NodeMemory.hpp>

#include <Kokkos_Macros.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace einrel::engine {

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream words(line);
    std::string key;
    std::size_t kib = 0;
    if (words >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

std::optional<DeviceMemory> available_cuda_memory() {
#ifdef KOKKOS_ENABLE_CUDA
  DeviceMemory memory;
  std::size_t total = 0;
  if (cudaGetDevice(&memory.device) != cudaSuccess || cudaMemGetInfo(&memory.free_bytes, &total) != cudaSuccess)
    throw Error("cannot read the free memory of this process's CUDA device");
  return memory;
#else
  return std::nullopt;
#endif
}

void check_node_memory(MPI_Comm comm, std::size_t estimate, bool device) {
  const comm::Communicator world(comm);
  // The ranks that draw on one memory: those of a node, and of one device there.
  std::optional<DeviceMemory> gpu;
  if (device) comm::collectively(world, [&] { gpu = available_cuda_memory(); });
  if (device && !gpu) return;
  MPI_Comm shared = MPI_COMM_NULL;
  comm::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &shared),
                  "MPI_Comm_split_type");
  if (gpu) {  // the node's ranks on this rank's device
    MPI_Comm node = shared;
    const int split = MPI_Comm_split(node, gpu->device, world.rank(), &shared);
    MPI_Comm_free(&node);
    comm::check_mpi(split, "MPI_Comm_split");
  }
  unsigned long long mine = estimate, needed = 0;
  const int rc = MPI_Allreduce(&mine, &needed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, shared);
  int ranks = 0;
  MPI_Comm_size(shared, &ranks);
  MPI_Comm_free(&shared);
  comm::check_mpi(rc, "MPI_Allreduce");
  comm::collectively(world, [&] {
    const std::size_t available = gpu ? gpu->free_bytes : available_host_memory();
    const std::string where = gpu ? " sharing CUDA device " + std::to_string(gpu->device) : "";
    if (available > 0 && needed > available)
      throw Error(
          "the plan needs " + std::to_string(needed) + " bytes on a node of " + std::to_string(ranks) + " rank(s)" +
          where + " (estimated: blocks, kernel temporaries, exchange buffers), and " + std::to_string(available) +
          " are available there: run on more nodes, or set a memory limit per rank to choose a plan that needs less");
  });
}

}  // namespace einrel::engine
