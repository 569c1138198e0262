// The `einrel` program: MPI first, then Kokkos, finalized in reverse.
#include <einrel_AtomicFile.hpp>
#include <einrel_Cli.hpp>
#include <einrel_DeviceCheck.hpp>
#include <einrel_Launcher.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

int main(int argc, char* argv[]) {
  int provided = 0;  // einrel calls MPI from this thread while Kokkos threads compute
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  // Started by another MPI's launcher, every process is a singleton: refuse before doing anything else.
  if (auto foreign = einrel::cli::detect_foreign_launcher()) {
    if (foreign->report) std::cerr << "einrel: error: " << foreign->message << std::endl;
    MPI_Finalize();
    // Launchers end the whole job at the first non-zero exit: the silent processes leave the reporting one
    // time to print its line first.
    if (!foreign->report) std::this_thread::sleep_for(std::chrono::seconds(2));
    return 1;
  }
  // Help and version without Kokkos, which would print its own option list and warnings first.
  if (einrel::cli::cli_info(MPI_COMM_WORLD, argc, argv, std::cout)) {
    MPI_Finalize();
    return 0;
  }
  // `plan` runs no kernel (its dry run is host bookkeeping): it starts no Kokkos backend, so a CUDA build
  // plans where no GPU is visible (a login node) and without the GPU's start-up. Kokkos' own options would
  // configure the backend it does not start, and are dropped.
  if (argc > 1 && std::strcmp(argv[1], "plan") == 0) {
    std::vector<char*> plan_args;
    for (int a = 0; a < argc; ++a)
      if (std::strncmp(argv[a], "--kokkos-", 9) != 0) plan_args.push_back(argv[a]);
    const int status = einrel::cli::cli_main(MPI_COMM_WORLD, static_cast<int>(plan_args.size()), plan_args.data(),
                                             std::cout, std::cerr);
    MPI_Finalize();
    return status;
  }
  // Kokkos' warnings (printed on stdout, per rank: a plan piped into dot or a JSON reader would carry them)
  // stay off; einrel gives its own advice on thread binding once, where it matters (thread_binding_note).
  std::vector<char*> args(argv, argv + argc);
  char disable_warnings[] = "--kokkos-disable-warnings";
  args.push_back(disable_warnings);
  int nargs = static_cast<int>(args.size());
  args.push_back(nullptr);
  // SIGINT, SIGTERM, SIGHUP (Ctrl-C, mpiexec forwarding a signal): no half-written output file stays behind.
  einrel::io::install_signal_cleanup();
  // A CUDA build without a visible GPU: one error line instead of Kokkos' abort (status 134) on every rank.
  if (!einrel::cli::device_usable_on_every_rank(MPI_COMM_WORLD, std::cerr)) {
    MPI_Finalize();
    return 1;
  }
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(nargs, args.data());
    status = einrel::cli::cli_main(MPI_COMM_WORLD, nargs, args.data(), std::cout, std::cerr);
  }
  MPI_Finalize();
  return status;
}
