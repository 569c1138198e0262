#ifndef EINREL_CLI_HPP
#define EINREL_CLI_HPP

#include <mpi.h>

#include <ostream>

namespace einrel {

// The `einrel` program after MPI and Kokkos are initialized: parses the subcommand and its options,
// runs it, and turns any Error into one "einrel: error: ..." line on rank 0. Returns the exit status.
int cli_main(MPI_Comm comm, int argc, char* argv[], std::ostream& out, std::ostream& err);

}  // namespace einrel

#endif
