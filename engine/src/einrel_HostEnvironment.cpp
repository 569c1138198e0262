#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>
#include <einrel_HostEnvironment.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace einrel {
namespace {

std::string level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

bool kokkos_finalized_with_mpi = false;  // Kokkos 3.4 has no is_finalized

int finalize_kokkos(MPI_Comm, int, void*, void*) {
  if (Kokkos::is_initialized()) Kokkos::finalize();
  kokkos_finalized_with_mpi = true;
  return MPI_SUCCESS;
}

}  // namespace

void start_kokkos_until_mpi_finalize() {
  if (Kokkos::is_initialized()) return;
  if (kokkos_finalized_with_mpi) throw Error("Kokkos was finalized with MPI: einrel cannot start it again");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error("einrel needs MPI to be initialized by the host code");
  char program[] = "einrel", quiet[] = "--kokkos-disable-warnings";  // the same arguments in Kokkos 3.4 and 4.x
  char* argv[] = {program, quiet, nullptr};
  int argc = 2;
  Kokkos::initialize(argc, argv);
  int keyval = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_kokkos, &keyval, nullptr) != MPI_SUCCESS ||
      MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr) != MPI_SUCCESS || MPI_Comm_free_keyval(&keyval) != MPI_SUCCESS)
    throw Error("cannot register einrel's Kokkos finalization with MPI_Finalize");
}

int required_mpi_thread_level(bool threaded) {
  if (!threaded) return MPI_THREAD_SINGLE;
  int main_thread = 1;
  MPI_Is_thread_main(&main_thread);
  return main_thread ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED;
}

void check_host_environment(bool threaded) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw Error("einrel needs MPI to be initialized (and not yet finalized) by the host code");
  if (!Kokkos::is_initialized()) throw Error("einrel needs Kokkos to be initialized by the host code");
  const int needed = required_mpi_thread_level(threaded);
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < needed)
    throw Error("einrel needs MPI thread level " + level_name(needed) + " (MPI was initialized with " +
                level_name(provided) + "): initialize MPI with MPI_Init_thread(&argc, &argv, " + level_name(needed) +
                ", &provided)");
}

int node_local_rank(MPI_Comm comm) {
  MPI_Comm node;
  comm::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int rank = 0;
  const int rc = MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  comm::check_mpi(rc, "MPI_Comm_rank");
  return rank;
}

}  // namespace einrel
