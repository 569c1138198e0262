#ifndef EINREL_CLI_HPP
#define EINREL_CLI_HPP

#include <mpi.h>

#include <ostream>

namespace einrel::cli {

// The `einrel` program after MPI and Kokkos are initialized: parses the subcommand and its options,
// runs it, and turns any Error into one "einrel: error: ..." line on rank 0. Returns the exit status.
int cli_main(MPI_Comm comm, int argc, char* argv[], std::ostream& out, std::ostream& err);

// `einrel --help` (or -h, help) and `einrel --version`: prints einrel's usage or version on rank 0 and
// returns true; returns false for any other command line. Needs MPI but not Kokkos, so that the program
// answers these before Kokkos::initialize, which would print its own option list for --help.
bool cli_info(MPI_Comm comm, int argc, char* argv[], std::ostream& out);

}  // namespace einrel::cli

#endif
