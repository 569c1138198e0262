// A host code linking an installed einrel: it owns MPI and Kokkos, holds A in row slabs and B on rank 0,
// and gets C = A B back in its own row slabs through einrel::Program, under mpiexec at any rank count.
// Only the umbrella header: MPI and Kokkos come with it.
#include <einrel.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main(int argc, char* argv[]) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    using Exec = Kokkos::DefaultExecutionSpace;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long n = 7, k = 3, m = 2;  // A is n x k with A(i, j) = i + j, B is k x m with B(j, c) = j - c
    einrel::Graph g;
    const auto a = g.input("A", einrel::Dtype::f64, {n, k});
    const auto b = g.input("B", einrel::Dtype::f64, {k, m});
    einrel::EinsumOptions named;
    named.name = "C";
    g.output(g.einsum("ij,jk->ik", a, b, named));
    einrel::Options options;  // the pipeline's options, as `einrel run` takes them
    options.planner = einrel::partition::planner_names().at(1);
    einrel::Program<Exec> program(MPI_COMM_WORLD, g, options);

    const long lo = n * rank / size, hi = n * (rank + 1) / size;
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> a_host("A slab", hi - lo, k),
        c_host("C", hi - lo, m);
    for (long i = lo; i < hi; ++i)
      for (long j = 0; j < k; ++j) a_host(i - lo, j) = double(i + j);
    auto a_slab = Kokkos::create_mirror_view_and_copy(Exec::memory_space{}, a_host);
    auto c_slab = Kokkos::create_mirror_view(Exec::memory_space{}, c_host);
    Kokkos::View<double**, Kokkos::LayoutRight, Exec::memory_space> b_whole("B", rank == 0 ? k : 0, rank == 0 ? m : 0);
    if (rank == 0) {
      auto b_host = Kokkos::create_mirror_view(b_whole);
      for (long j = 0; j < k; ++j)
        for (long c = 0; c < m; ++c) b_host(j, c) = double(j - c);
      Kokkos::deep_copy(b_whole, b_host);
    }
    program.set_input<double>("A", {einrel::local_piece(einrel::Box{{lo, 0}, {hi, k}}, a_slab)});
    program.set_input<double>("B", rank == 0 ? std::vector{einrel::local_piece(einrel::Box{{0, 0}, {k, m}}, b_whole)}
                                             : std::vector<einrel::LocalPiece<double, Exec::memory_space>>{});
    program.set_output<double>("C", {einrel::local_piece(einrel::Box{{lo, 0}, {hi, m}}, c_slab)});
    program.execute();
    Kokkos::deep_copy(c_host, c_slab);
    double err = 0;
    for (long i = lo; i < hi; ++i)
      for (long c = 0; c < m; ++c) {
        double want = 0;
        for (long j = 0; j < k; ++j) want += double(i + j) * double(j - c);
        err = std::max(err, std::abs(c_host(i - lo, c) - want));
      }
    double worst = 0;
    MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    status = worst < 1e-12 ? 0 : 1;
    if (rank == 0)
      std::cout << "consumer: C = A B in row slabs on " << size << " ranks (" << Exec::name() << "), max error "
                << worst << (status ? ": FAILED" : ": ok") << "\n";
  }
  MPI_Finalize();
  return status;
}
