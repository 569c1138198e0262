// The memory model of the planner's memory-constrained search, and the search against exhaustive search.
#include <einrel_CostModel.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_VertexMemory.hpp>

#include <einrel_Viable.hpp>
#include "PlanEnumeration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace {

using namespace einrel;
using partition::CostModel;
using partition::MemoryBudget;
using partition::PartitionVector;

TEST(PlannerMemory, VertexBytesCountsTheBlocksOfTheBusiestRanksTuples) {
  Graph g;
  const VertexId a = g.input("A", Dtype::f64, {100, 60});
  const VertexId b = g.input("B", Dtype::f64, {60, 80});
  const VertexId c = g.einsum("ij,jk->ik", a, b);
  g.output(c);
  const MemoryBudget two_ranks{0, 2, {}, {}};
  // {i:2, j:1, k:2}: 4 tuples, 2 on a rank; A has 2 blocks of 50x60, B 2 of 60x40, C 4 of 50x40.
  EXPECT_DOUBLE_EQ(partition::vertex_bytes(g, c, {2, 1, 2}, two_ranks), (2 * 50 * 60 + 2 * 60 * 40 + 2 * 50 * 40) * 8);
  // {i:4, j:1, k:1} on 2 ranks: B is one block, read by both tuples of a rank: held once.
  EXPECT_DOUBLE_EQ(partition::vertex_bytes(g, c, {4, 1, 1}, two_ranks), (2 * 25 * 60 + 60 * 80 + 2 * 25 * 80) * 8);
  // Uneven blocks are counted at their largest: 100 rows in 3 parts of at most 34 rows, one tuple per rank.
  EXPECT_DOUBLE_EQ(partition::vertex_bytes(g, c, {3, 1, 1}, MemoryBudget{0, 3, {}, {}}),
                   (34 * 60 + 60 * 80 + 34 * 80) * 8);
  // f32 values take half.
  Graph h;
  const VertexId a32 = h.input("A", Dtype::f32, {100, 60});
  const VertexId c32 = h.einsum("ij,jk->ik", a32, h.input("B", Dtype::f32, {60, 80}));
  h.output(c32);
  EXPECT_DOUBLE_EQ(partition::vertex_bytes(h, c32, {2, 1, 2}, two_ranks),
                   partition::vertex_bytes(g, c, {2, 1, 2}, two_ranks) / 2);
  // A streamed input is read a block at a time: {i:4} on 2 ranks holds one block of A, not two.
  MemoryBudget streamed = two_ranks;
  streamed.streamed.assign(g.size(), false);
  streamed.streamed[a] = true;
  EXPECT_DOUBLE_EQ(partition::vertex_bytes(g, c, {4, 1, 1}, streamed), (25 * 60 + 60 * 80 + 2 * 25 * 80) * 8);
  // The engine's kernel temporaries are added as given.
  const MemoryBudget with_calls{0, 2, [](VertexId, const std::vector<Extent>&) { return 1000.0; }, {}};
  EXPECT_DOUBLE_EQ(partition::vertex_bytes(g, c, {2, 1, 2}, with_calls),
                   partition::vertex_bytes(g, c, {2, 1, 2}, two_ranks) + 1000);
}

TEST(PlannerMemory, ResidentBytesAreTheOtherLiveValuesEvenShares) {
  Graph g;
  const VertexId x = g.input("X", Dtype::f64, {10, 10});  // 800 bytes
  const VertexId w = g.input("W", Dtype::f64, {10, 5});   // 400 bytes
  const VertexId h = g.einsum("ij,jk->ik", x, x);         // reads X; W waits for the last vertex
  const VertexId r = g.einsum("ij->i", h);                // an output: kept to the end
  const VertexId y = g.einsum("ij,jk->ik", h, w);
  g.output(r);
  g.output(y);
  const std::vector<double> resident = partition::resident_bytes(g, MemoryBudget{0, 4, {}, {}});
  EXPECT_DOUBLE_EQ(resident[h], 400.0 / 4);  // W (X is h's operand)
  EXPECT_DOUBLE_EQ(resident[r], 400.0 / 4);  // W (h is r's operand)
  EXPECT_DOUBLE_EQ(resident[y], 80.0 / 4);   // r, an output (h and W are y's operands)
  MemoryBudget streamed{0, 4, {}, std::vector<bool>(g.size(), false)};
  streamed.streamed[w] = true;  // read from its file by y alone: not held before
  EXPECT_DOUBLE_EQ(partition::resident_bytes(g, streamed)[h], 0);
}

// The peak of a plan by the model the search prunes with: per EinSum vertex, the other live values' shares, its
// blocks and its exchange buffers (twice its share of the floats it moves: join, aggregation, repartitions).
double model_peak(const Graph& g, const std::vector<PartitionVector>& plan, const MemoryBudget& budget,
                  CostModel model) {
  const std::vector<double> resident = partition::resident_bytes(g, budget);
  const std::vector<partition::VertexCost> costs = partition::evaluate_cost(g, plan, model);
  double peak = 0;
  for (VertexId v = 0; v < g.size(); ++v) {
    if (g.vertex(v).is_input()) continue;
    const double exchange = 2.0 * static_cast<double>(dtype_bytes(g.vertex(v).dtype)) /
                            static_cast<double>(budget.ranks) * costs[v].total();
    peak = std::max(peak, resident[v] + partition::vertex_bytes(g, v, plan[v].parts(), budget) + exchange);
  }
  return peak;
}

double cost_of(const Graph& g, const std::vector<PartitionVector>& plan, CostModel model = CostModel::engine) {
  double cost = 0;
  for (const auto& c : partition::evaluate_cost(g, plan, model)) cost += c.total();
  return cost;
}

// (cost, model peak) of every combination of viable vectors at p on `ranks` ranks; nothing when there are too many.
std::vector<std::pair<double, double>> every_plan(const Graph& g, Extent p, Extent ranks, CostModel model) {
  std::vector<std::pair<double, double>> plans;
  test::for_each_plan(g, p, 5000, [&](const std::vector<PartitionVector>& plan) {
    plans.emplace_back(cost_of(g, plan, model), model_peak(g, plan, {0, ranks, {}, {}}, model));
  });
  return plans;
}

// A random chain: each EinSum reads the previous result and, half the time, an input of one or two dimensions.
Graph random_chain(std::mt19937& gen, int einsums) {
  static const Extent extents[] = {2, 3, 4, 6, 8, 12};
  Graph g;
  const Dtype dtype = gen() % 3 ? Dtype::f64 : Dtype::f32;
  auto input = [&] {
    Bound b(1 + gen() % 2);
    for (auto& x : b) x = extents[gen() % 6];
    return g.input("I" + std::to_string(g.size()), dtype, b);
  };
  VertexId last = input();
  for (int made = 0; made < einsums; ++made) {
    const std::string prev = std::string("abc").substr(0, g.vertex(last).bound.size());
    if (gen() % 2) {
      const VertexId in = input();
      // the input's first dimension joins the result's last where the extents agree, else an outer product
      const bool joins = g.vertex(in).bound[0] == g.vertex(last).bound.back();
      const std::string other =
          std::string(joins ? prev.substr(prev.size() - 1) : "x") + (g.vertex(in).bound.size() > 1 ? "y" : "");
      std::string out = prev.substr(0, prev.size() - (joins ? 1 : 0)) + other.substr(joins ? 1 : 0);
      if (out.size() > 2) out = out.substr(out.size() - 2);
      if (out.empty()) out = prev.substr(0, 1);
      last = g.einsum(prev + "," + other + "->" + out, last, in);
    } else {
      last = g.einsum(prev + "->" + (gen() % 2 ? prev : prev.substr(0, 1)), last);
    }
  }
  g.output(last);
  return g;
}

TEST(PlannerMemory, ConstrainedSearchIsTheLeastCostPlanWithinTheBudgetOnChains) {
  std::mt19937 gen(77);
  int compared = 0, constrained = 0, infeasible = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const Graph g = random_chain(gen, 2 + trial % 3);
    for (Extent ranks : {1, 2, 3})
      for (Extent p : {2, 4, 6}) {
        const CostModel model = trial % 2 ? CostModel::engine : CostModel::paper;
        const std::vector<std::pair<double, double>> plans = every_plan(g, p, ranks, model);
        if (plans.empty()) continue;
        const auto cheapest = *std::min_element(plans.begin(), plans.end());
        double least_peak = std::numeric_limits<double>::infinity();
        for (const auto& pl : plans) least_peak = std::min(least_peak, pl.second);
        for (double budget_bytes : {least_peak * 0.9, least_peak, (least_peak + cheapest.second) / 2}) {
          double optimum = std::numeric_limits<double>::infinity();
          for (const auto& pl : plans)
            if (pl.second <= budget_bytes * (1 + 1e-12)) optimum = std::min(optimum, pl.first);
          const MemoryBudget budget{budget_bytes * (1 + 1e-12), ranks, {}, {}};
          const auto found = partition::eindecomp_within(g, p, model, budget);
          if (optimum == std::numeric_limits<double>::infinity()) {
            EXPECT_FALSE(found.has_value()) << "trial " << trial << " p = " << p << " R = " << ranks;
            ++infeasible;
            continue;
          }
          ASSERT_TRUE(found.has_value()) << "trial " << trial << " p = " << p << " R = " << ranks;
          const double cost = cost_of(g, found->partitions, model);
          EXPECT_NEAR(cost, optimum, 1e-9 * std::max(1.0, optimum)) << "trial " << trial << " p = " << p;
          EXPECT_LE(model_peak(g, found->partitions, {0, ranks, {}, {}}, model), budget.bytes_per_rank)
              << "trial " << trial;
          if (optimum > cheapest.first * (1 + 1e-9)) ++constrained;
          ++compared;
        }
      }
  }
  EXPECT_GT(compared, 500);
  EXPECT_GT(constrained, 50);  // the budget bound: the optimum within it costs more than the unconstrained one
  EXPECT_GT(infeasible, 100);  // below the least peak nothing fits
}

TEST(PlannerMemory, ConstrainedPlansOfGeneralDagsFitTheModelsBudget) {
  // Random chains whose first result is read again at the end: linearized and refined, no longer exact, but
  // every plan the search returns fits its budget, and an ample budget changes nothing.
  std::mt19937 gen(91);
  int tried = 0, below = 0;
  for (int trial = 0; trial < 60; ++trial) {
    Graph g = random_chain(gen, 3);
    VertexId first = 0;
    while (g.vertex(first).is_input()) ++first;
    const VertexId last = g.outputs().back();
    const std::string kept = std::string("ab").substr(0, g.vertex(first).bound.size());
    const std::string summed = std::string("xy").substr(0, g.vertex(last).bound.size());
    Graph dag = g;  // the same vertices, and one more reading `first` and `last`
    dag.output(dag.einsum(kept + "," + summed + "->" + kept, first, last));
    for (Extent ranks : {2, 3})
      for (Extent p : {ranks, 2 * ranks}) {
        const auto plans = every_plan(dag, p, ranks, CostModel::engine);
        if (plans.empty()) continue;
        const auto free = partition::eindecomp_within(dag, p, CostModel::engine, {1e30, ranks, {}, {}});
        ASSERT_TRUE(free.has_value());
        // An ample budget finds a plan as cheap (ties may go to another plan: to the smaller peak).
        EXPECT_NEAR(cost_of(dag, free->partitions),
                    cost_of(dag, partition::eindecomp(dag, p, CostModel::engine).partitions),
                    1e-9 * cost_of(dag, free->partitions));
        const double unconstrained = model_peak(dag, free->partitions, {0, ranks, {}, {}}, CostModel::engine);
        double least = unconstrained;
        for (const auto& pl : plans) least = std::min(least, pl.second);
        for (double fraction : {0.0, 0.5}) {
          const MemoryBudget budget{least + fraction * (unconstrained - least), ranks, {}, {}};
          const auto plan = partition::eindecomp_within(dag, p, CostModel::engine, budget);
          ++tried;
          if (!plan) continue;
          const double peak = model_peak(dag, plan->partitions, budget, CostModel::engine);
          EXPECT_LE(peak, budget.bytes_per_rank * (1 + 1e-12)) << "trial " << trial;
          below += peak < unconstrained;
        }
      }
  }
  EXPECT_GT(tried, 100);
  EXPECT_GT(below, 10);
}

}  // namespace
