// The `einrel` program: MPI first, then Kokkos, finalized in reverse.
#include <einrel_Cli.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstring>
#include <iostream>
#include <vector>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  // `einrel plan` computes nothing with Kokkos: keep its warnings (printed on stdout) out of the plan,
  // which is often piped into dot or a JSON reader.
  std::vector<char*> args(argv, argv + argc);
  char disable_warnings[] = "--kokkos-disable-warnings";
  if (argc > 1 && std::strcmp(argv[1], "plan") == 0) args.push_back(disable_warnings);
  int nargs = static_cast<int>(args.size());
  args.push_back(nullptr);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(nargs, args.data());
    status = einrel::cli_main(MPI_COMM_WORLD, nargs, args.data(), std::cout, std::cerr);
  }
  MPI_Finalize();
  return status;
}
