// einrel::Program inside a host program that got the environment wrong: before Kokkos is initialized, and
// with MPI initialized by plain MPI_Init (MPI_THREAD_SINGLE) under a threaded backend. Each must be an
// einrel::Error naming what to do, not a crash. Exit 0 when both errors come as expected.
#include <einrel_Program.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <iostream>
#include <string>

namespace {

// The message of the Error that constructing a Program on MPI_COMM_WORLD throws, or "" when none.
template <class Exec>
std::string error_of_program() {
  einrel::Graph g;
  g.output(g.einsum("i->i", g.input("x", einrel::Dtype::f64, {4})));
  try {
    einrel::Program<Exec> program(MPI_COMM_WORLD, g);
  } catch (const einrel::Error& e) {
    return e.what();
  }
  return "";
}

bool expect(const std::string& message, const std::string& part) {
  const bool ok = message.find(part) != std::string::npos;
  std::cout << (ok ? "ok: " : "FAILED: expected '" + part + "' in: ") << message << "\n";
  return ok;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int provided = MPI_THREAD_MULTIPLE;
  MPI_Query_thread(&provided);
  bool ok = expect(error_of_program<Kokkos::DefaultHostExecutionSpace>(), "needs Kokkos to be initialized");
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
#ifdef KOKKOS_ENABLE_OPENMP
    if (provided == MPI_THREAD_SINGLE)
      ok = expect(error_of_program<Kokkos::OpenMP>(),
                  "needs MPI thread level MPI_THREAD_FUNNELED (MPI was initialized with MPI_THREAD_SINGLE): "
                  "initialize MPI with MPI_Init_thread") &&
           ok;
    else
      std::cout << "skipped the thread-level case: MPI_Init gave level " << provided << " here\n";
#else
    std::cout << "skipped the thread-level case: no threaded host backend\n";
#endif
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
