// The baseline planners' definitions (docs/planner.md).
#include <einrel_Baselines.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_LayerRoles.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Viable.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;
using partition::PartitionVector;

// One vertex Z = einsum(equation, X, Y) over inputs of the given bounds.
Graph one_einsum(const std::string& equation, const std::vector<Bound>& bounds) {
  Graph g;
  std::vector<VertexId> operands;
  for (const Bound& b : bounds) operands.push_back(g.input("X" + std::to_string(operands.size()), Dtype::f64, b));
  g.output(g.einsum(equation, operands));
  return g;
}

TEST(PlannerBaselines, SqrtIsTheTwoDimensionalOrThreeDimensionalAlgorithmOnMatmul) {
  const Graph square = one_einsum("ij,jk->ik", {{64, 64}, {64, 64}});
  EXPECT_EQ(partition::sqrt_baseline(square, 4).partitions[2], PartitionVector("ijk", {2, 1, 2}));
  EXPECT_EQ(partition::sqrt_baseline(square, 8).partitions[2], PartitionVector("ijk", {2, 2, 2}));
  EXPECT_EQ(partition::sqrt_baseline(square, 16).partitions[2], PartitionVector("ijk", {4, 2, 2}));
  EXPECT_EQ(partition::sqrt_baseline(square, 64).partitions[2], PartitionVector("ijk", {4, 4, 4}));
  // It does not adapt to skewed shapes, except where an extent is too short to cut.
  const Graph skewed = one_einsum("ij,jk->ik", {{4096, 2}, {2, 4096}});
  EXPECT_EQ(partition::sqrt_baseline(skewed, 64).partitions[2], PartitionVector("ijk", {8, 2, 4}));
  // Element-wise: √p × √p.
  EXPECT_EQ(partition::sqrt_baseline(one_einsum("ij,ij->ij", {{8, 8}, {8, 8}}), 16).partitions[2],
            PartitionVector("ij", {4, 4}));
}

TEST(PlannerBaselines, DataCutsTheFirstOutputLabelThenSpills) {
  EXPECT_EQ(partition::data_baseline(one_einsum("ij,jk->ik", {{64, 64}, {64, 64}}), 16).partitions[2],
            PartitionVector("ijk", {16, 1, 1}));
  // i too short: k takes the rest, then the aggregated j.
  EXPECT_EQ(partition::data_baseline(one_einsum("ij,jk->ik", {{2, 64}, {64, 4}}), 32).partitions[2],
            PartitionVector("ijk", {2, 4, 4}));
  // The batch label of a batched product comes first in the output.
  EXPECT_EQ(partition::data_baseline(one_einsum("bij,bjk->bik", {{8, 4, 4}, {8, 4, 4}}), 8).partitions[2],
            PartitionVector("bijk", {8, 1, 1, 1}));
  // A full reduction has only aggregated labels; the extents cannot reach 64: the viable fallback.
  EXPECT_EQ(partition::data_baseline(one_einsum("ij->", {{2, 8}}), 64).partitions[1], PartitionVector("ij", {2, 8}));
}

TEST(PlannerBaselines, GreedyTakesTheCheapestVectorGivenItsProducers) {
  Graph g;
  g.output(builders::matrix_chain(g, {64, 8, 256, 16}, Dtype::f64));
  for (partition::CostModel model : {partition::CostModel::engine, partition::CostModel::paper}) {
    const auto greedy = partition::greedy_baseline(g, 8, model).partitions;
    for (VertexId v = 0; v < g.size(); ++v) {
      if (g.vertex(v).is_input()) continue;
      // Its own cost with the producers' vectors as chosen, against every alternative.
      auto cost_of = [&](const PartitionVector& d) {
        auto plan = greedy;
        plan[v] = d;
        return partition::evaluate_cost(g, plan, model)[v].total();
      };
      for (const auto& d : partition::viable(g.resolved(v), 8))
        EXPECT_LE(cost_of(greedy[v]), cost_of(d)) << g.vertex(v).name << " " << d.str();
    }
  }
}

TEST(PlannerBaselines, EveryBaselineGivesViableVectors) {
  Graph g;
  g.output(builders::transformer_layer(g, g.input("X", Dtype::f32, {64, 12}), {64, 12, 3, 4}, 20));
  for (const char* baseline : {"sqrt", "data", "greedy", "megatron", "sequence", "attention"})
    for (Extent p : {1, 2, 8, 64, 1024}) {
      const auto plan = partition::make_plan(g, p, baseline).partitions;
      for (VertexId v = 0; v < g.size(); ++v) {
        if (g.vertex(v).is_input()) continue;
        const auto viable = partition::viable(g.resolved(v), p);
        EXPECT_NE(std::find(viable.begin(), viable.end(), plan[v]), viable.end())
            << g.vertex(v).name << " " << plan[v].str() << " p = " << p;
      }
    }
}

Graph llama(Extent s, Extent a, Extent h, Extent d, Extent f) {
  Graph g;
  g.output(builders::llama_layer(g, g.input("x", Dtype::f32, {s, a}), {s, a, h, d, f, 1e-5}));
  return g;
}

TEST(PlannerBaselines, LayerRolesOfALlamaLayer) {
  const Graph g = llama(64, 32, 4, 8, 96);
  const auto roles = partition::layer_roles(g);
  ASSERT_TRUE(roles);
  const auto& of = roles->classes.of;
  const VertexId x = *g.find("x"), wq = *g.find("WQ"), mask = *g.find("mask"), gate = *g.find("W_gate");
  EXPECT_EQ(roles->sequence, of[x][0]);
  EXPECT_EQ(roles->model, of[x][1]);
  EXPECT_EQ(roles->heads, of[wq][1]);
  EXPECT_EQ(roles->head_dim, of[wq][2]);
  EXPECT_EQ(of[mask][0], roles->sequence);  // the key sequence is the same axis
  EXPECT_EQ(of[mask][1], roles->sequence);
  EXPECT_EQ(roles->hidden, (std::vector<int>{of[gate][1]}));
  EXPECT_EQ(of[*g.find("W_down")][0], of[gate][1]);
  // Every class named once.
  const std::vector<int> named{roles->sequence, roles->model, roles->heads, roles->head_dim, roles->hidden[0]};
  for (std::size_t i = 0; i < named.size(); ++i)
    for (std::size_t j = i + 1; j < named.size(); ++j) EXPECT_NE(named[i], named[j]);
  // Attention alone (drivers/examples/attention.ein's shape): no FFN hidden width; a matrix chain: no layer.
  Graph att;
  const auto q = att.input("Q", Dtype::f64, {16, 8});
  att.output(builders::multi_head_attention(att, q, q, q, {16, 8, 2, 4}));
  ASSERT_TRUE(partition::layer_roles(att));
  EXPECT_TRUE(partition::layer_roles(att)->hidden.empty());
  Graph chain;
  chain.output(builders::matrix_chain(chain, {8, 8, 8, 8}, Dtype::f64));
  EXPECT_FALSE(partition::layer_roles(chain));
  EXPECT_THROW(partition::make_plan(chain, 4, "megatron"), Error);
}

TEST(PlannerBaselines, LlmBaselinesSplitWhatTheyName) {
  const Graph g = llama(64, 32, 4, 8, 96);
  auto parts = [&](const std::string& planner, const char* vertex) {
    return partition::make_plan(g, 4, planner).partitions[*g.find(vertex)];
  };
  // Megatron: heads in the attention, the FFN hidden width in the SwiGLU, the sequence elsewhere.
  EXPECT_EQ(parts("megatron", "Q").project("shd"), (std::vector<Extent>{1, 4, 1}));
  EXPECT_EQ(parts("megatron", "S").project("hst"), (std::vector<Extent>{4, 1, 1}));
  EXPECT_EQ(parts("megatron", "attn_out").project("ha"), (std::vector<Extent>{4, 1}));
  EXPECT_EQ(parts("megatron", "G").project("saf"), (std::vector<Extent>{1, 1, 4}));
  EXPECT_EQ(parts("megatron", "D").project("sfa"), (std::vector<Extent>{1, 4, 1}));
  EXPECT_EQ(parts("megatron", "X1").project("sa"), (std::vector<Extent>{4, 1}));
  // Sequence: the query sequence everywhere, keys whole.
  EXPECT_EQ(parts("sequence", "S").project("hst"), (std::vector<Extent>{1, 4, 1}));
  EXPECT_EQ(parts("sequence", "O").project("shdt"), (std::vector<Extent>{4, 1, 1, 1}));
  EXPECT_EQ(parts("sequence", "G").project("saf"), (std::vector<Extent>{4, 1, 1}));
  // Attention: heads, and the FFN by sequence. At p = 16 > 4 heads the sequence takes the rest.
  EXPECT_EQ(parts("attention", "S").project("hst"), (std::vector<Extent>{4, 1, 1}));
  EXPECT_EQ(parts("attention", "G").project("saf"), (std::vector<Extent>{4, 1, 1}));
  EXPECT_EQ(partition::make_plan(g, 16, "attention").partitions[*g.find("S")].project("hst"),
            (std::vector<Extent>{4, 4, 1}));
}

// The bar of issue 15: on LLaMA layers, EinDecomp's predicted cost is at most each LLM baseline's.
TEST(PlannerBaselines, EinDecompNoWorseThanTheLlmBaselines) {
  for (const Graph& g : {llama(256, 256, 8, 32, 704), llama(1024, 512, 8, 64, 1408), llama(128, 512, 32, 16, 1376)})
    for (Extent p = 4; p <= 64; p *= 2) {
      const double eindecomp = partition::make_plan(g, p, "eindecomp").total_cost;
      for (const char* baseline : {"megatron", "sequence", "attention"})
        EXPECT_LE(eindecomp, partition::make_plan(g, p, baseline).total_cost * (1 + 1e-12)) << baseline << " p=" << p;
    }
}

}  // namespace
