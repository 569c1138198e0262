// The `einrel` program: MPI first, then Kokkos, finalized in reverse.
#include <einrel_Cli.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <iostream>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    status = einrel::cli_main(MPI_COMM_WORLD, argc, argv, std::cout, std::cerr);
  }
  MPI_Finalize();
  return status;
}
