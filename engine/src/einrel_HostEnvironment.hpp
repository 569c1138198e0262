#ifndef EINREL_HOSTENVIRONMENT_HPP
#define EINREL_HOSTENVIRONMENT_HPP

#include <mpi.h>

namespace einrel {

// einrel inside a host application: the application owns MPI_Init/MPI_Finalize and Kokkos::initialize/
// finalize; einrel never calls them (nor exit or MPI_Abort: it throws einrel::Error).

// The MPI thread level einrel needs: it calls MPI only from the thread that calls it, while the threads
// of a non-Serial Kokkos backend compute, so MPI_THREAD_FUNNELED (MPI_THREAD_SERIALIZED when that
// thread is not MPI's main thread); MPI_THREAD_SINGLE suffices with `threaded` false (Kokkos::Serial).
int required_mpi_thread_level(bool threaded);

// Local: throws Error naming what is missing unless MPI is initialized and not finalized, Kokkos is
// initialized, and MPI provides required_mpi_thread_level(threaded) (MPI_Query_thread): the message tells
// the host code to use MPI_Init_thread with that level.
void check_host_environment(bool threaded);

// Collective over comm: this rank's index among the ranks of its node (MPI_Comm_split_type with
// MPI_COMM_TYPE_SHARED). With several GPUs per node, a host code gives Kokkos the device
// node_local_rank % number of devices before Kokkos::initialize.
int node_local_rank(MPI_Comm comm);

// Local, for hosts that know nothing of Kokkos (the C and Fortran API, the ScaLAPACK layer): initializes Kokkos
// (warnings off) unless it is initialized, and then registers its finalization with MPI_Finalize (the delete
// callback of an attribute on MPI_COMM_SELF, which MPI_Finalize runs first). Needs MPI initialized; throws
// Error when Kokkos was finalized that way already.
void start_kokkos_until_mpi_finalize();

}  // namespace einrel

#endif
