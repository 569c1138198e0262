#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_PartitionedEvaluator.hpp>
#include <einrel_Planner.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <random>

namespace {

using namespace einrel;
using partition::PartitionVector;
using Values = std::vector<std::optional<AnyTensor<TEST_MEMSPACE>>>;

template <class Scalar>
Values random_inputs(const Graph& g, unsigned seed, double lo, double hi) {
  Values values(g.size());
  for (VertexId v = 0; v < g.size(); ++v)
    if (g.vertex(v).is_input())
      values[v] = tensor_from_host<TEST_MEMSPACE>(g.vertex(v).name, g.vertex(v).bound,
                                                  test::random_values<Scalar>(g.vertex(v).bound, seed + v, lo, hi));
  return values;
}

// Evaluates g partitioned by `plan` and unpartitioned, and expects every output to agree: the rewrite of
// eindecomp.txt §4.3 changes only the order in which ⊕ combines terms.
template <class Scalar>
void expect_rewrite_exact(const Graph& g, const std::vector<PartitionVector>& plan, const Values& inputs, double tol) {
  TEST_EXECSPACE exec;
  const auto partitioned = evaluate_partitioned(exec, g, inputs, plan);
  const auto reference = evaluate_unpartitioned(exec, g, inputs);
  using T = Tensor<Scalar, TEST_MEMSPACE>;
  for (VertexId v : g.outputs()) {
    SCOPED_TRACE(g.vertex(v).name + " " + (g.vertex(v).is_input() ? "input" : plan[v].str()));
    ASSERT_TRUE(partitioned.values[v].has_value());
    const auto expected = tensor_to_host(std::get<T>(*reference.values[v]));
    test::expect_all_close(tensor_to_host(std::get<T>(*partitioned.values[v])),
                           std::vector<double>(expected.begin(), expected.end()), tol);
  }
}

// A random power-of-two number of parts per label, at most the label's extent.
std::vector<PartitionVector> random_plan(const Graph& g, std::mt19937& gen) {
  std::vector<PartitionVector> plan(g.size());
  for (VertexId v = 0; v < g.size(); ++v) {
    const Vertex& vertex = g.vertex(v);
    if (vertex.is_input()) continue;
    const std::string& labels = g.resolved(v).unique_labels();
    std::vector<Extent> parts;
    for (char c : labels) {
      const Extent extent = g.resolved(v).extent(c);
      Extent p = 1;
      while (2 * p <= extent && gen() % 2) p *= 2;
      parts.push_back(p);
    }
    plan[v] = PartitionVector(labels, parts);
  }
  return plan;
}

// A random DAG: letters a-f with fixed random extents (1 and odd ones included); inputs of rank 0-3;
// each vertex applies a random unary or binary einsum with random ops to earlier vertices, keeping a
// random subset of the labels (possibly none). Every vertex is an output.
Graph random_graph(std::mt19937& gen, Dtype dtype) {
  const std::string letters = "abcdef";
  const std::vector<Extent> extent_choices = {1, 2, 3, 4, 5, 7, 8};
  std::map<char, Extent> extent;
  for (char c : letters) extent[c] = extent_choices[gen() % extent_choices.size()];
  auto shuffled_subset = [&](std::string from, std::size_t max_size) {
    std::shuffle(from.begin(), from.end(), gen);
    return from.substr(0, gen() % (std::min(from.size(), max_size) + 1));
  };
  Graph g;
  std::vector<std::string> labels;
  const int num_inputs = 2 + static_cast<int>(gen() % 3);
  for (int k = 0; k < num_inputs; ++k) {
    const std::string l = shuffled_subset(letters, 3);
    Bound b;
    for (char c : l) b.push_back(extent[c]);
    g.input("in" + std::to_string(k), dtype, b);
    labels.push_back(l);
  }
  const std::vector<JoinOp> joins = {JoinOp::mul, JoinOp::add,    JoinOp::sub,    JoinOp::max,
                                     JoinOp::min, JoinOp::sqdiff, JoinOp::absdiff};
  const std::vector<AggOp> aggs = {AggOp::sum, AggOp::max, AggOp::min};
  const std::vector<MapOp> maps = {{MapKind::identity, 0}, {MapKind::identity, 0}, {MapKind::tanh, 0},
                                   {MapKind::relu, 0},     {MapKind::abs, 0},      {MapKind::scale, 0.5}};
  const int num_vertices = 3 + static_cast<int>(gen() % 4);
  for (int n = 0; n < num_vertices; ++n) {
    const bool binary = gen() % 3 != 0;
    std::vector<VertexId> operands = {static_cast<VertexId>(gen() % g.size())};
    if (binary) operands.push_back(static_cast<VertexId>(gen() % g.size()));
    std::string all;
    for (VertexId v : operands)
      for (char c : labels[v])
        if (all.find(c) == std::string::npos) all += c;
    std::string equation;
    for (std::size_t k = 0; k < operands.size(); ++k) equation += (k ? "," : "") + labels[operands[k]];
    const std::string out = shuffled_subset(all, all.size());
    EinsumOptions options;
    if (binary) options.join = joins[gen() % joins.size()];
    options.agg = aggs[gen() % aggs.size()];
    options.map = maps[gen() % maps.size()];
    g.einsum(equation + "->" + out, operands, options);
    labels.push_back(out);
    g.output(g.size() - 1);
  }
  return g;
}

template <class Scalar>
void check_random_graphs(unsigned seed, double tol) {
  std::mt19937 gen(seed);
  for (int trial = 0; trial < 40; ++trial) {
    const Graph g = random_graph(gen, dtype_of<Scalar>());
    SCOPED_TRACE("trial " + std::to_string(trial) + ":\n" + print_graph(g));
    const Values inputs = random_inputs<Scalar>(g, seed + trial, -1, 1);
    for (int plan = 0; plan < 3; ++plan) expect_rewrite_exact<Scalar>(g, random_plan(g, gen), inputs, tol);
  }
}

TEST(TEST_CATEGORY, PartitionedEqualsUnpartitionedOnRandomGraphsF64) { check_random_graphs<double>(11, 1e-12); }
TEST(TEST_CATEGORY, PartitionedEqualsUnpartitionedOnRandomGraphsF32) { check_random_graphs<float>(12, 1e-5); }

// Partitions along aggregated labels with uneven blocks: a matmul whose inner extent 13 is cut in 8,
// a max-reduction (softmax) cut along the reduced dimension, and a full reduction to a 0-d tensor.
TEST(TEST_CATEGORY, PartitionsAlongAggregatedLabels) {
  const Graph g = parse_graph(R"(input A f64[9,13]
input B f64[13,6]
T = einsum("ij,jk->ik", A, B)
S = softmax(T)
s = einsum("ij,ij->", A, A, join=sqdiff, agg=max)
output T, S, s, A
)",
                              "agg.ein");
  std::vector<PartitionVector> plan(g.size());
  plan[2] = PartitionVector("ijk", {2, 8, 4});
  plan[3] = PartitionVector("ab", {4, 4});
  plan[4] = PartitionVector("ab", {8, 2});
  plan[5] = PartitionVector("ab", {2, 4});
  plan[6] = PartitionVector("ab", {1, 1});
  plan[7] = PartitionVector("ij", {8, 8});
  expect_rewrite_exact<double>(g, plan, random_inputs<double>(g, 5, -1, 1), 1e-13);
  plan[2] = PartitionVector("ijk", {16, 1, 1});  // more parts than the extent
  EXPECT_THROW(evaluate_partitioned(TEST_EXECSPACE{}, g, random_inputs<double>(g, 5, -1, 1), plan), Error);
  plan[2] = PartitionVector("ik", {1, 1});  // not covering the labels
  EXPECT_THROW(evaluate_partitioned(TEST_EXECSPACE{}, g, random_inputs<double>(g, 5, -1, 1), plan), Error);
}

// A transformer layer from the builders, planned by every planner for several p.
TEST(TEST_CATEGORY, TransformerLayerUnderEveryPlanner) {
  Graph g;
  const auto x = g.input("X", Dtype::f32, {8, 6});
  g.output(builders::transformer_layer(g, x, {8, 6, 2, 3}, 10, "L_"));
  const Values inputs = random_inputs<float>(g, 9, -0.5, 0.5);
  for (const std::string& planner : partition::planner_names())
    for (Extent p : {1, 2, 8, 64})
      expect_rewrite_exact<float>(g, partition::make_plan(g, p, planner).partitions, inputs, 1e-5);
}

}  // namespace
