#ifndef EINREL_LAUNCHER_HPP
#define EINREL_LAUNCHER_HPP

#include <optional>
#include <string>

namespace einrel::cli {

// Started by the launcher of another MPI (Open MPI's `mpiexec` for an MPICH build, or the reverse), every
// process is an independent singleton: MPI_COMM_WORLD has one rank while the launcher's environment says
// the job has more. einrel then refuses instead of running the whole job once per process.
struct ForeignLauncher {
  // What was seen and which launcher to use, without the "einrel: error: " prefix, e.g. "einrel was built
  // with MPICH but started by Open MPI's mpiexec (OMPI_COMM_WORLD_SIZE=2, MPI sees 1 rank); start it with
  // mpiexec.mpich".
  std::string message;
  // Whether this process prints the message: the launcher's rank 0 (or, when only a rank variable gives
  // the foreign launcher away, the lowest rank that sees it), so that one line appears for the whole job.
  bool report = false;
};

// Compares what the launcher's environment says (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or a rank variable
// OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK at or beyond the MPI size) with `world_size`, the size of
// MPI_COMM_WORLD. Empty when they agree or no launcher variable is set (a plain singleton).
std::optional<ForeignLauncher> detect_foreign_launcher(int world_size);

// The same for MPI_COMM_WORLD: call it right after MPI_Init, before anything writes output. Local (not
// collective).
std::optional<ForeignLauncher> detect_foreign_launcher();

// Local: einrel starts Kokkos with its warnings off (Kokkos 3.4 prints four lines per rank when OMP_PROC_BIND
// is unset) and says what matters once, in the run summary: where OpenMP runs more than one thread per rank
// and OMP_PROC_BIND is unset, this note on binding them; empty otherwise.
std::string thread_binding_note();

}  // namespace einrel::cli

#endif
