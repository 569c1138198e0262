#include <einrel_Config.hpp>
#include <einrel_Launcher.hpp>

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <cerrno>
#include <cstdlib>
#include <type_traits>

namespace einrel::cli {
namespace {

// The MPI einrel is compiled against, from its mpi.h.
#if defined(OPEN_MPI)
constexpr const char* built_with = "Open MPI";
#elif defined(MPICH_VERSION)  // MPICH and its derivatives (Intel MPI, MVAPICH, Cray MPICH)
constexpr const char* built_with = "MPICH";
#else
constexpr const char* built_with = "its MPI";
#endif

// Environment variables by which a launcher tells each process the job's size and its rank in it.
struct LauncherVariables {
  const char* launcher;  // who sets them
  const char* size;      // nullptr: this launcher exports no size
  const char* rank;
};
constexpr LauncherVariables launchers[] = {
    {"Open MPI's mpiexec", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
    {"a PMI launcher (e.g. MPICH's mpiexec, srun --mpi=pmi2)", "PMI_SIZE", "PMI_RANK"},
    {"a PMIx launcher (e.g. Open MPI's mpiexec, srun --mpi=pmix)", nullptr, "PMIX_RANK"},
};

// The variable's value when it is set to a non-negative integer.
std::optional<long> integer_variable(const char* name) {
  const char* text = name ? std::getenv(name) : nullptr;
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || errno != 0 || value < 0) return std::nullopt;
  return value;
}

ForeignLauncher foreign(const LauncherVariables& l, const char* variable, long value, int world_size, bool report) {
  return {std::string("einrel was built with ") + built_with + " but started by " + l.launcher + " (" + variable + "=" +
              std::to_string(value) + ", MPI sees " + std::to_string(world_size) +
              (world_size == 1 ? " rank" : " ranks") + "); start it with " + EINREL_MPI_LAUNCHER,
          report};
}

}  // namespace

std::optional<ForeignLauncher> detect_foreign_launcher(int world_size) {
  for (const LauncherVariables& l : launchers) {
    const std::optional<long> rank = integer_variable(l.rank);
    if (const std::optional<long> size = integer_variable(l.size); size && *size > world_size)
      return foreign(l, l.size, *size, world_size, !rank || *rank == 0);
    // Without a size, rank r says the job has at least r + 1 ranks; rank world_size is the lowest that sees it.
    if (rank && *rank >= world_size) return foreign(l, l.rank, *rank, world_size, *rank == world_size);
  }
  return std::nullopt;
}

std::optional<ForeignLauncher> detect_foreign_launcher() {
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  return detect_foreign_launcher(world_size);
}

std::string thread_binding_note() {
#ifdef KOKKOS_ENABLE_OPENMP
  if (std::is_same_v<Kokkos::DefaultHostExecutionSpace, Kokkos::OpenMP> &&
      Kokkos::DefaultHostExecutionSpace().concurrency() > 1 && !std::getenv("OMP_PROC_BIND"))
    return "OMP_PROC_BIND is not set, so OpenMP threads may move between cores; with one rank per node, "
           "OMP_PROC_BIND=spread OMP_PLACES=threads binds them";
#endif
  return "";
}

}  // namespace einrel::cli
