#ifndef EINREL_PARTITIONEDEVALUATOR_HPP
#define EINREL_PARTITIONEDEVALUATOR_HPP

#include <einrel_EinsumKernel.hpp>
#include <einrel_Evaluator.hpp>
#include <einrel_PartitionVector.hpp>
#include <einrel_TensorRelation.hpp>
#include <einrel_TraOps.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <optional>
#include <variant>
#include <vector>

namespace einrel {

template <class MemorySpace>
using AnyTensorRelation = std::variant<TensorRelation<float, MemorySpace>, TensorRelation<double, MemorySpace>>;

namespace detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One EinSum vertex as TRA (eindecomp.txt §4.3, equation 5): join the operand relations on their shared
// labels with the block kernel K (or transform the one operand with it), then ⊕-aggregate the partial
// blocks over the aggregated labels' key entries. Operands already have the partitions d[l_in]. Each
// kernel call resolves the EinSum against its blocks' bounds.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TensorRelation<Scalar, MemorySpace> evaluate_vertex(const ExecutionSpace& exec, const Vertex& vertex,
                                                    const partition::PartitionVector& d,
                                                    const std::vector<TensorRelation<Scalar, MemorySpace>>& operands) {
  using Block = Tensor<Scalar, MemorySpace>;
  const ResolvedEinSum& resolved = *vertex.resolved;
  const EinSum& e = resolved.einsum();
  auto kernel = [&](const std::vector<Bound>& block_bounds, const Block& x, const std::optional<Block>& y) {
    const ResolvedEinSum block = resolve(e, block_bounds);
    const Block z = Block::uninitialized(vertex.name + "/partial", block.output_bound());
    kernels::einsum(exec, block, x, y, z);
    return z;
  };
  Relation<Scalar, MemorySpace> partial(0);
  if (e.arity() == 1) {
    partial = tra::transform(operands[0].relation(),
                             [&](const Block& x) { return kernel({x.bound()}, x, std::optional<Block>{}); });
  } else {
    std::vector<int> keys_x, keys_y;  // the shared labels' dimensions in X and Y
    for (std::size_t k = 0; k < e.inputs[1].size(); ++k)
      if (const auto pos = resolved.position_in(0, e.inputs[1][k]); pos != ResolvedEinSum::absent) {
        keys_x.push_back(static_cast<int>(pos));
        keys_y.push_back(static_cast<int>(k));
      }
    partial =
        tra::join(operands[0].relation(), operands[1].relation(), keys_x, keys_y, [&](const Block& x, const Block& y) {
          return kernel({x.bound(), y.bound()}, x, y);
        });
  }
  // The key labels of the join result, l_X ⊙ l_Y, are the unique labels in their order.
  std::vector<int> group_by;
  for (std::size_t pos : resolved.positions(e.output)) group_by.push_back(static_cast<int>(pos));
  Extent agg_parts = 1;
  for (char c : resolved.aggregated_labels()) agg_parts *= d.parts_of(c);
  // With no aggregated label partitioned every group has one block: aggregation only reorders keys.
  Relation<Scalar, MemorySpace> result =
      agg_parts == 1 ? tra::rekey(partial, static_cast<int>(group_by.size()),
                                  [&](const Key& k) { return tra::detail::pick(k, group_by); })
                     : tra::aggregate(exec, partial, group_by, [&](const Block& acc, const Block& b) {
                         kernels::accumulate(exec, e.agg, acc, b);
                       });
  return TensorRelation<Scalar, MemorySpace>(vertex.bound, d.project(e.output), std::move(result));
}

}  // namespace detail

// Evaluates `graph` as tensor relations on one rank: every EinSum vertex v runs as join + aggregation
// with partition vector partitions[v] (eindecomp.txt §4.3), each operand repartitioned (Π, §4.2) from
// its producer's partition to the one v needs. Inputs are as for evaluate_unpartitioned; the result holds
// the whole tensors of the graph's outputs (other entries of `values` are released once consumed).
template <class ExecutionSpace>
Evaluation<typename ExecutionSpace::memory_space> evaluate_partitioned(
    const ExecutionSpace& exec, const Graph& graph,
    std::vector<std::optional<AnyTensor<typename ExecutionSpace::memory_space>>> values,
    const std::vector<partition::PartitionVector>& partitions) {
  using Memory = typename ExecutionSpace::memory_space;
  check_inputs(graph, values);
  if (partitions.size() != graph.size())
    throw Error("evaluation got " + std::to_string(partitions.size()) + " partition vectors for a graph of " +
                std::to_string(graph.size()) + " vertices");

  std::vector<int> consumers(graph.size(), 0);
  for (const Vertex& v : graph.vertices())
    for (VertexId in : v.inputs) ++consumers[in];
  std::vector<bool> is_output(graph.size(), false);
  for (VertexId v : graph.outputs()) is_output[v] = true;

  Evaluation<Memory> result{std::vector<std::optional<AnyTensor<Memory>>>(graph.size()),
                            std::vector<double>(graph.size(), 0.0), std::vector<double>(graph.size(), 0.0)};
  std::vector<std::optional<AnyTensorRelation<Memory>>> relations(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) {
      if (is_output[v]) result.values[v] = values[v];
      continue;
    }
    const partition::PartitionVector& d = partitions[v];
    d.check_fits(graph.resolved(v));

    const auto start = std::chrono::steady_clock::now();
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using S = decltype(scalar);
      using TR = TensorRelation<S, Memory>;
      std::vector<TR> operands;
      for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
        const VertexId in = vertex.inputs[k];
        const std::vector<Extent> parts = d.project(vertex.einsum->inputs[k]);
        if (!relations[in]) {  // an input vertex, cut as its first consumer needs it
          relations[in] = to_relation(exec, std::get<Tensor<S, Memory>>(*values[in]), parts);
          values[in].reset();
        }
        operands.push_back(repartition(exec, std::get<TR>(*relations[in]), parts));
      }
      compat::fence(exec, "einrel::evaluate_partitioned: operands of " + vertex.name);
      const auto kernels_start = std::chrono::steady_clock::now();
      TR z = detail::evaluate_vertex(exec, vertex, d, operands);
      compat::fence(exec, "einrel::evaluate_partitioned: " + vertex.name);
      result.kernel_seconds[v] = detail::seconds_since(kernels_start);
      if (is_output[v]) result.values[v] = to_tensor(exec, z, vertex.name);
      relations[v] = std::move(z);
    });
    for (VertexId in : vertex.inputs)
      if (--consumers[in] == 0) relations[in].reset();
    compat::fence(exec, "einrel::evaluate_partitioned: output of " + vertex.name);
    result.seconds[v] = detail::seconds_since(start);
  }
  return result;
}

}  // namespace einrel

#endif
