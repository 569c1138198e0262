#include <einrel_Communicator.hpp>
#include <einrel_DeviceCheck.hpp>
#include <einrel_Error.hpp>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <type_traits>

namespace einrel::cli {

std::optional<std::string> device_unusable() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>) {
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    const std::string built = "this einrel runs on Kokkos' Cuda backend; run it where a GPU is visible";
    if (status != cudaSuccess)
      return "no usable CUDA device: " + std::string(cudaGetErrorString(status)) + " (" + built + ")";
    if (devices == 0) return "no CUDA device is visible to this process (" + built + ")";
  }
#endif
  return std::nullopt;
}

bool device_usable_on_every_rank(MPI_Comm comm, std::ostream& err,
                                 const std::function<std::optional<std::string>()>& check) {
  const comm::Communicator ranks(comm);
  try {
    comm::collectively(ranks, [&] {
      if (const std::optional<std::string> why = check()) throw Error(*why);
    });
    return true;
  } catch (const Error& e) {
    if (ranks.rank() == 0) err << "einrel: error: " << e.what() << std::endl;
    return false;
  }
}

}  // namespace einrel::cli
