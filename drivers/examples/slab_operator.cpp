// A host code's time loop through einrel's library API. Each rank owns a slab of rows of a field
// u (N x M, rows split unevenly, as a simulation's domain decomposition would), rank 0 owns the operator
// K (M x M). Every step einrel computes v = u K + u (graph planned once), writes v back into each rank's
// own slab, and the host code takes v as the next u after scaling it. Every rank checks its slab against
// the same steps done in plain loops on the host.
//
//   mpiexec.mpich -n 3 build/drivers/examples/einrel_slab_operator [N M STEPS]
#include <einrel.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Slab = Kokkos::View<double**, Kokkos::LayoutRight>;
using HostSlab = Slab::HostMirror;

// The operator's entry (j, k): small, so that the field stays bounded over the steps.
double operator_entry(long j, long k, long m) { return std::cos(0.1 * double(j * m + k)) / double(m); }

// The graph, built with the C++ API: v = u K + u. `uk` is the product's vertex.
einrel::Graph slab_graph(long n, long m, einrel::VertexId& uk) {
  einrel::Graph g;
  const auto u = g.input("u", einrel::Dtype::f64, {n, m});
  const auto k = g.input("K", einrel::Dtype::f64, {m, m});
  uk = g.einsum("ij,jk->ik", u, k);
  einrel::EinsumOptions add;
  add.join = einrel::JoinOp::add;
  add.name = "v";
  g.output(g.einsum("ij,ij->ij", uk, u, add));
  return g;
}

// One step of the host code's own reference in plain loops: u = (u K + u) / 2 on rows [0, rows).
void reference_step(HostSlab reference, const std::vector<double>& kk, long rows, long m) {
  std::vector<double> next(static_cast<std::size_t>(rows * m));
  for (long i = 0; i < rows; ++i)
    for (long c = 0; c < m; ++c) {
      double s = reference(i, c);
      for (long j = 0; j < m; ++j) s += reference(i, j) * kk[j * m + c];
      next[i * m + c] = 0.5 * s;
    }
  for (long i = 0; i < rows; ++i)
    for (long c = 0; c < m; ++c) reference(i, c) = next[i * m + c];
}

// The largest difference between every rank's slab and its reference, relative to the largest reference
// element (collective).
double max_relative_error(Slab u_slab, HostSlab reference) {
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, u_slab);
  double worst[2] = {0, 0}, all[2];
  for (long i = 0; i < long(got.extent(0)); ++i)
    for (long c = 0; c < long(got.extent(1)); ++c) {
      worst[0] = std::max(worst[0], std::abs(got(i, c) - reference(i, c)));
      worst[1] = std::max(worst[1], std::abs(reference(i, c)));
    }
  MPI_Allreduce(worst, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all[1] > 0 ? all[0] / all[1] : all[0];
}

// Runs the example on every rank; returns the exit status.
int run(long n, long m, int steps) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // 1.-2. The graph, planned once for this communicator.
  einrel::VertexId uk = 0;
  einrel::Program<Exec> program(MPI_COMM_WORLD, slab_graph(n, m, uk));

  // 3. The host code's own arrays: this rank's rows [lo, hi) of u and v, and K on rank 0.
  const long lo = n * rank / size, hi = n * (rank + 1) / size;
  Slab u_slab("u slab", hi - lo, m), v_slab("v slab", hi - lo, m);
  Slab k_whole("K", rank == 0 ? m : 0, rank == 0 ? m : 0);
  Kokkos::parallel_for(
      "init u", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {hi - lo, m}),
      KOKKOS_LAMBDA(long i, long j) { u_slab(i, j) = std::sin(0.01 * double((lo + i) * m + j)); });
  std::vector<double> kk(static_cast<std::size_t>(m * m));
  for (long j = 0; j < m; ++j)
    for (long c = 0; c < m; ++c) kk[j * m + c] = operator_entry(j, c, m);
  if (rank == 0) Kokkos::deep_copy(k_whole, HostSlab(kk.data(), m, m));

  // 4. Hand einrel the pieces once; their elements may change between executions.
  const einrel::Box rows{{lo, 0}, {hi, m}};
  program.set_input<double>("u", {einrel::local_piece(rows, u_slab)});
  program.set_input<double>("K", rank == 0 ? std::vector{einrel::local_piece(einrel::Box{{0, 0}, {m, m}}, k_whole)}
                                           : std::vector<einrel::LocalPiece<double, Exec::memory_space>>{});
  program.set_output<double>("v", {einrel::local_piece(rows, v_slab)});

  // 5. The time loop: einrel computes v in this rank's slab; the host code scales it into u.
  auto reference = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, u_slab);
  for (int step = 0; step < steps; ++step) {
    program.execute();
    Kokkos::parallel_for(
        "u = v / 2", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {hi - lo, m}),
        KOKKOS_LAMBDA(long i, long j) { u_slab(i, j) = 0.5 * v_slab(i, j); });
    reference_step(reference, kk, hi - lo, m);
  }
  Kokkos::fence();

  // 6. Check every rank's slab.
  const double rel = max_relative_error(u_slab, reference);
  const int status = rel < 1e-12 ? 0 : 1;
  if (rank == 0)
    std::printf("slab operator: %ld x %ld field on %d ranks, %d steps, plan %s, max relative error %.2e: %s\n", n, m,
                size, program.executions(), program.plan().partitions[uk].str().c_str(), rel,
                status == 0 ? "ok" : "FAILED");
  return status;
}

}  // namespace

int main(int argc, char* argv[]) {
  // The host code owns MPI and Kokkos. einrel calls MPI from this thread while Kokkos threads compute.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const long n = argc > 1 ? std::atol(argv[1]) : 100, m = argc > 2 ? std::atol(argv[2]) : 60;
    const int steps = argc > 3 ? std::atoi(argv[3]) : 10;
    try {
      status = run(n, m, steps);
    } catch (const std::exception& e) {
      // einrel throws the same error on every rank; the host code decides what to do.
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0) std::fprintf(stderr, "slab operator: error: %s\n", e.what());
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
