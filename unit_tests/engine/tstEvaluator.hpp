#include <einrel_Evaluator.hpp>
#include <einrel_GraphFile.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;

TEST(TEST_CATEGORY, EvaluatorChainsVerticesInTopologicalOrder) {
  const Graph g = parse_graph(R"(
input A f64[6,4]
input B f64[4,5]
input C f64[5]
T = einsum("ij,jk->ik", A, B)
U = einsum("ik,k->i", T, C)
s = einsum("i->", U)
output T, s
)",
                              "chain.ein");
  std::vector<std::vector<double>> host = {test::random_values<double>({6, 4}, 1),
                                           test::random_values<double>({4, 5}, 2), test::random_values<double>({5}, 3)};
  std::vector<std::optional<AnyTensor<TEST_MEMSPACE>>> values(g.size());
  for (VertexId v = 0; v < 3; ++v)
    values[v] = tensor_from_host<TEST_MEMSPACE>(g.vertex(v).name, g.vertex(v).bound, host[v]);

  const auto result = evaluate_unpartitioned(TEST_EXECSPACE{}, g, values);

  const auto t_ref = test::reference_einsum(*g.vertex(3).einsum, {{6, 4}, {4, 5}}, std::vector{host[0], host[1]});
  const auto u_ref =
      test::reference_einsum(*g.vertex(4).einsum, {{6, 5}, {5}}, std::vector{t_ref, std::vector<double>(host[2])});
  const auto s_ref = test::reference_einsum(*g.vertex(5).einsum, {{6}}, std::vector<std::vector<double>>{u_ref});
  using T = Tensor<double, TEST_MEMSPACE>;
  test::expect_all_close(tensor_to_host(std::get<T>(*result.values[3])), t_ref, test::sum_tolerance<double>(4));
  test::expect_all_close(tensor_to_host(std::get<T>(*result.values[5])), s_ref, test::sum_tolerance<double>(120));
  EXPECT_GE(result.seconds[3], 0.0);
  EXPECT_EQ(result.seconds[0], 0.0);
}

TEST(TEST_CATEGORY, EvaluatorRejectsMissingOrMismatchedInputs) {
  const Graph g = parse_graph("input A f32[3]\nB = einsum(\"i->\", A)\noutput B\n", "g.ein");
  std::vector<std::optional<AnyTensor<TEST_MEMSPACE>>> values(g.size());
  EXPECT_THROW(evaluate_unpartitioned(TEST_EXECSPACE{}, g, values), Error);
  values[0] = Tensor<double, TEST_MEMSPACE>("A", {3});  // f64 where f32 is declared
  EXPECT_THROW(evaluate_unpartitioned(TEST_EXECSPACE{}, g, values), Error);
  values[0] = Tensor<float, TEST_MEMSPACE>("A", {4});
  EXPECT_THROW(evaluate_unpartitioned(TEST_EXECSPACE{}, g, values), Error);
}

}  // namespace
