#ifndef EINREL_EVALUATOR_HPP
#define EINREL_EVALUATOR_HPP

#include <einrel_EinsumKernel.hpp>
#include <einrel_Error.hpp>
#include <einrel_Graph.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <optional>
#include <vector>

namespace einrel {

// Values and wall times of every vertex after evaluating a graph (inputs take no time): `seconds` is
// the whole vertex, `kernel_seconds` its block kernels and aggregation.
template <class MemorySpace>
struct Evaluation {
  std::vector<std::optional<AnyTensor<MemorySpace>>> values;
  std::vector<double> seconds;
  std::vector<double> kernel_seconds;
};

// Throws Error unless `values` holds, for every input vertex of `graph`, a tensor of its dtype and bound.
template <class MemorySpace>
void check_inputs(const Graph& graph, const std::vector<std::optional<AnyTensor<MemorySpace>>>& values) {
  if (values.size() != graph.size())
    throw Error("evaluation got " + std::to_string(values.size()) + " values for a graph of " +
                std::to_string(graph.size()) + " vertices");
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (!vertex.is_input()) continue;
    const auto& in = values[v];
    const bool fits =
        in && std::visit([&](const auto& t) { return t.dtype() == vertex.dtype && t.bound() == vertex.bound; }, *in);
    if (!fits)
      throw Error("input '" + vertex.name + "' needs a " + std::string(dtype_name(vertex.dtype)) + " tensor of shape " +
                  to_string(vertex.bound));
  }
}

// Evaluates every EinSum vertex of `graph` in topological order on `exec`, each tensor in one block.
// `values` holds, indexed by vertex, a tensor for every input vertex (dtype and bound as declared);
// the other entries are filled in. Throws Error when an input is missing or does not match.
template <class ExecutionSpace>
Evaluation<typename ExecutionSpace::memory_space> evaluate_unpartitioned(
    const ExecutionSpace& exec, const Graph& graph,
    std::vector<std::optional<AnyTensor<typename ExecutionSpace::memory_space>>> values) {
  using Memory = typename ExecutionSpace::memory_space;
  check_inputs(graph, values);
  const std::size_t n = graph.size();
  Evaluation<Memory> result{std::move(values), std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const auto start = std::chrono::steady_clock::now();
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using T = Tensor<decltype(scalar), Memory>;
      const T& x = std::get<T>(*result.values[vertex.inputs[0]]);
      std::optional<T> y;
      if (vertex.inputs.size() > 1) y = std::get<T>(*result.values[vertex.inputs[1]]);
      const T z = T::uninitialized(vertex.name, vertex.bound);
      kernels::einsum(exec, graph.resolved(v), x, y, z);
      compat::fence(exec, "einrel::evaluate_unpartitioned: " + vertex.name);
      result.values[v] = z;
    });
    result.seconds[v] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.kernel_seconds[v] = result.seconds[v];
  }
  return result;
}

}  // namespace einrel

#endif
