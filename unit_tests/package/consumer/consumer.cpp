// Builds a small graph with the C++ API, evaluates it on the default Kokkos backend, checks the result.
#include <einrel_Evaluator.hpp>
#include <einrel_Graph.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <iostream>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    using Memory = Kokkos::DefaultExecutionSpace::memory_space;
    einrel::Graph g;
    const auto a = g.input("A", einrel::Dtype::f64, {2, 3});
    const auto b = g.input("B", einrel::Dtype::f64, {3});
    const auto c = g.einsum("ij,j->i", a, b);
    g.output(c);

    std::vector<std::optional<einrel::AnyTensor<Memory>>> values(g.size());
    values[a] = einrel::tensor_from_host<Memory>("A", {2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
    values[b] = einrel::tensor_from_host<Memory>("B", {3}, std::vector<double>{1, 0, -1});
    const auto result = einrel::evaluate_unpartitioned(Kokkos::DefaultExecutionSpace{}, g, values);
    const auto out = einrel::tensor_to_host(std::get<einrel::Tensor<double, Memory>>(*result.values[c]));
    std::cout << "C = [" << out[0] << ", " << out[1] << "] on " << Kokkos::DefaultExecutionSpace::name() << "\n";
    status = (std::abs(out[0] + 2) < 1e-14 && std::abs(out[1] + 2) < 1e-14) ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}
