// The baseline planners' definitions (docs/planner.md).
#include <einrel_Baselines.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_GraphBuilders.hpp>
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
  for (const char* baseline : {"sqrt", "data", "greedy"})
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

}  // namespace
