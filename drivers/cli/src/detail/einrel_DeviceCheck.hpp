#ifndef EINREL_DEVICECHECK_HPP
#define EINREL_DEVICECHECK_HPP

#include <mpi.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace einrel::cli {

// Why this process cannot start Kokkos' default execution space, or nothing. Asked before
// Kokkos::initialize, which aborts the process (status 134, a message naming a Kokkos source file) when a
// CUDA build finds no usable GPU, as on a login node. Host backends always can.
std::optional<std::string> device_unusable();

// Collective over comm: runs `check` (device_unusable) on every rank and agrees on the outcome. When some
// rank cannot start, rank 0 prints one "einrel: error: ..." line with the lowest such rank's cause, and
// every rank returns false; otherwise every rank returns true and nothing is printed.
bool device_usable_on_every_rank(MPI_Comm comm, std::ostream& err,
                                 const std::function<std::optional<std::string>()>& check = device_unusable);

}  // namespace einrel::cli

#endif
