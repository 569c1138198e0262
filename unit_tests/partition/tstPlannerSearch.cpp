// The EinDecomp dynamic program against exhaustive search, and eindecomp against the baselines.
#include <einrel_Baselines.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_Error.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Viable.hpp>

#include "PlanEnumeration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace {

using namespace einrel;
using partition::CostModel;
using partition::PartitionVector;

constexpr CostModel both_models[] = {CostModel::engine, CostModel::paper};

double total(const Graph& g, const std::vector<PartitionVector>& partitions, CostModel model = CostModel::engine) {
  double sum = 0;
  for (const auto& c : partition::evaluate_cost(g, partitions, model)) sum += c.total();
  return sum;
}

// A random EinSum over `operands`: every operand gets distinct labels, a dimension of the second operand
// shares a label of the first when their extents agree (half the time), and the output is a random
// selection of the labels in random order.
std::string random_equation(const Graph& g, const std::vector<VertexId>& operands, std::mt19937& gen) {
  std::vector<std::string> labels(operands.size());
  std::string fresh = "abcdefgh", used;
  auto next_label = [&] {
    const char c = fresh[used.size()];
    used += c;
    return c;
  };
  for (std::size_t k = 0; k < operands.size(); ++k)
    for (std::size_t dim = 0; dim < g.vertex(operands[k]).bound.size(); ++dim) {
      char label = 0;
      if (k == 1)
        for (std::size_t x = 0; x < labels[0].size() && !label; ++x)
          if (g.vertex(operands[0]).bound[x] == g.vertex(operands[1]).bound[dim] &&
              labels[1].find(labels[0][x]) == std::string::npos && gen() % 2)
            label = labels[0][x];
      labels[k] += label ? label : next_label();
    }
  std::shuffle(used.begin(), used.end(), gen);
  const std::string output = used.substr(0, gen() % (std::min<std::size_t>(used.size(), 3) + 1));
  std::string equation = labels[0];
  if (operands.size() == 2) equation += "," + labels[1];
  return equation + "->" + output;
}

// A random graph of `einsums` EinSum vertices with extents in {1, 2, 3, 4, 6, 8}. Tree-shaped: every EinSum
// result is consumed at most once (inputs may be shared). Otherwise results may be reused.
Graph random_graph(std::mt19937& gen, int einsums, bool tree) {
  static const Extent extents[] = {1, 2, 3, 4, 6, 8};
  Graph g;
  std::vector<VertexId> pool;  // tensors an EinSum may read
  auto new_input = [&] {
    Bound b(1 + gen() % 2);
    for (auto& x : b) x = extents[gen() % 6];
    pool.push_back(g.input("I" + std::to_string(g.size()), Dtype::f64, b));
  };
  for (int k = 0; k < 2; ++k) new_input();
  for (int made = 0; made < einsums;) {
    if (gen() % 4 == 0) new_input();
    std::vector<VertexId> operands;
    for (std::size_t arity = 1 + gen() % 2; operands.size() < arity;) {
      const std::size_t pick = gen() % pool.size();
      operands.push_back(pool[pick]);
      if (tree && !g.vertex(pool[pick]).is_input()) pool.erase(pool.begin() + pick);
      if (pool.empty()) new_input();
    }
    EinsumOptions named;
    named.name = "V" + std::to_string(g.size());
    if (operands.size() == 2) named.join = JoinOp::add;
    pool.push_back(g.einsum(random_equation(g, operands, gen), operands, named));
    ++made;
  }
  g.output(pool.back());
  return g;
}

// The least total cost over every combination of viable vectors, or -1 when there are too many.
double exhaustive_optimum(const Graph& g, Extent p, CostModel model) {
  double best = -1;
  test::for_each_plan(g, p, 20000, [&](const std::vector<PartitionVector>& plan) {
    const double cost = total(g, plan, model);
    if (best < 0 || cost < best) best = cost;
  });
  return best;
}

TEST(PlannerSearch, DynamicProgramEqualsExhaustiveSearchOnRandomTrees) {
  std::mt19937 gen(2024);
  int compared = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const Graph g = random_graph(gen, 2 + trial % 3, true);
    ASSERT_TRUE(partition::is_tree_shaped(g));
    for (Extent p : {1, 2, 3, 4, 6, 8, 12})  // any p: the factorizations of p over the labels
      for (CostModel model : both_models) {
        const double optimum = exhaustive_optimum(g, p, model);
        if (optimum < 0) continue;
        const partition::Plan plan = partition::make_plan(g, p, "eindecomp", model);
        EXPECT_NEAR(plan.total_cost, optimum, 1e-9 * optimum)
            << "p = " << p << " trial " << trial << " " << partition::cost_model_name(model);
        ++compared;
      }
  }
  EXPECT_GT(compared, 1000);
}

void expect_no_worse_than_baselines(const Graph& g, Extent p, const std::string& what) {
  for (CostModel model : both_models) {
    const double best = partition::make_plan(g, p, "eindecomp", model).total_cost;
    for (const char* baseline : {"sqrt", "data", "greedy"})
      EXPECT_LE(best, partition::make_plan(g, p, baseline, model).total_cost * (1 + 1e-12))
          << baseline << " p = " << p << " " << what << " " << partition::cost_model_name(model);
  }
}

TEST(PlannerSearch, EinDecompIsNoWorseThanAnyBaselineOnTrees) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 60; ++trial) {
    const Graph g = random_graph(gen, 3 + trial % 6, true);
    for (Extent p : {2, 6, 8, 32}) expect_no_worse_than_baselines(g, p, "trial " + std::to_string(trial));
  }
  for (bool skewed : {false, true}) {
    Graph chain;
    chain.output(builders::matrix_chain_program(chain, 4096, skewed, Dtype::f32));
    for (Extent p : {4, 12, 16, 64}) expect_no_worse_than_baselines(chain, p, skewed ? "skewed chain" : "square chain");
  }
}

TEST(PlannerSearch, EinDecompIsNoWorseThanAnyBaselineOnDags) {
  // On DAGs the refinement also starts from every baseline's plan and only ever lowers the cost.
  std::mt19937 gen(31);
  for (int trial = 0; trial < 40; ++trial) {
    const Graph g = random_graph(gen, 4 + trial % 10, false);
    for (Extent p : {4, 5, 32}) expect_no_worse_than_baselines(g, p, "trial " + std::to_string(trial));
  }
}

TEST(PlannerSearch, LinearizationOfAChainIsTheDynamicProgram) {
  Graph g;
  g.output(builders::matrix_chain(g, {64, 8, 256, 16, 128, 32, 512}, Dtype::f64));
  for (Extent p : {2, 16, 64})
    for (CostModel model : both_models) {
      const auto dp = partition::eindecomp_tree(g, p, model);
      EXPECT_EQ(partition::eindecomp_linearized(g, p, model, false).partitions, dp.partitions);
      EXPECT_EQ(partition::eindecomp_linearized(g, p, model, true).partitions, dp.partitions);
    }
}

TEST(PlannerSearch, SeveralSinksArePlannedIndependently) {
  Graph both, first, second;
  for (Graph* g : {&both, &first}) g->output(builders::matrix_chain(*g, {64, 8, 256, 16}, Dtype::f64, "a"));
  for (Graph* g : {&both, &second}) g->output(builders::matrix_chain(*g, {32, 512, 4, 64}, Dtype::f64, "b"));
  for (Extent p : {4, 32})
    EXPECT_DOUBLE_EQ(partition::make_plan(both, p, "eindecomp").total_cost,
                     partition::make_plan(first, p, "eindecomp").total_cost +
                         partition::make_plan(second, p, "eindecomp").total_cost);
}

TEST(PlannerSearch, GeneralDagsGetViableVectorsAndRefinementOnlyHelps) {
  std::mt19937 gen(99);
  std::vector<Graph> graphs;
  Graph layer;
  layer.output(builders::transformer_layer(layer, layer.input("X", Dtype::f32, {256, 64}), {256, 64, 4, 16}, 128));
  graphs.push_back(std::move(layer));
  for (int trial = 0; trial < 40; ++trial) graphs.push_back(random_graph(gen, 4 + trial % 8, false));
  for (const Graph& g : graphs)
    for (Extent p : {2, 16, 64}) {
      const auto plain = partition::eindecomp_linearized(g, p, CostModel::engine, false);
      const auto refined = partition::eindecomp_linearized(g, p, CostModel::engine, true);
      EXPECT_LE(total(g, refined.partitions), total(g, plain.partitions) * (1 + 1e-12));
      EXPECT_GT(refined.partitions_considered, plain.partitions_considered);
      for (VertexId v = 0; v < g.size(); ++v) {
        if (g.vertex(v).is_input()) continue;
        const auto viable = partition::viable(g.resolved(v), p);
        EXPECT_NE(std::find(viable.begin(), viable.end(), refined.partitions[v]), viable.end())
            << g.vertex(v).name << " " << refined.partitions[v].str();
      }
    }
  EXPECT_FALSE(partition::is_tree_shaped(graphs[0]));
  EXPECT_THROW(partition::eindecomp_tree(graphs[0], 4, CostModel::engine), Error);
}

TEST(PlannerSearch, PlansAreDeterministicAndCostedByTheModel) {
  Graph g;
  g.output(builders::transformer_layer(g, g.input("X", Dtype::f32, {128, 32}), {128, 32, 4, 8}, 64));
  for (const std::string& planner : partition::planner_names()) {
    const partition::Plan a = partition::make_plan(g, 16, planner), b = partition::make_plan(g, 16, planner);
    EXPECT_EQ(a.partitions, b.partitions) << planner;
    EXPECT_EQ(a.planner, planner);
    EXPECT_EQ(a.procs, 16);
    EXPECT_DOUBLE_EQ(a.total_cost, total(g, a.partitions)) << planner;
    EXPECT_GT(a.partitions_considered, 0u);
  }
}

TEST(PlannerSearch, RejectsUnknownPlannersAndPOutOfRange) {
  Graph g;
  g.output(builders::matrix_chain(g, {8, 8, 8}, Dtype::f64));
  EXPECT_EQ(partition::planner_names(),
            (std::vector<std::string>{"eindecomp", "sqrt", "data", "greedy", "megatron", "sequence", "attention"}));
  EXPECT_EQ(partition::planners_for(g), (std::vector<std::string>{"eindecomp", "sqrt", "data", "greedy"}));
  try {
    partition::make_plan(g, 4, "magic");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "unknown planner 'magic' (available: eindecomp, sqrt, data, greedy, megatron, sequence, attention)");
  }
  EXPECT_THROW(partition::make_plan(g, 0, "eindecomp"), Error);
  EXPECT_THROW(partition::make_plan(g, -4, "sqrt"), Error);
  EXPECT_THROW(partition::make_plan(g, (Extent{1} << 40) + 1, "eindecomp"), Error);
  // p = R for any rank count: every rank runs one join tuple.
  for (Extent R : {1, 3, 4, 5, 6, 12}) EXPECT_EQ(partition::procs_for_ranks(R), R);
  EXPECT_THROW(partition::procs_for_ranks(0), Error);
}

// Every planner at a p that is not a power of two: vectors multiply to p exactly ({i:3,j:2} at p = 6) and
// are among viable(v, p), so eindecomp's search covers what the baselines choose.
TEST(PlannerSearch, EveryPlannerPlansAnyP) {
  Graph layer;
  layer.output(builders::transformer_layer(layer, layer.input("X", Dtype::f32, {96, 48}), {96, 48, 6, 8}, 120));
  Graph chain;
  chain.output(builders::matrix_chain_program(chain, 1200, true, Dtype::f32));
  for (const Graph* g : {&layer, &chain})
    for (Extent p : {3, 5, 6, 12, 30})
      for (const std::string& planner : partition::planners_for(*g)) {
        const partition::Plan plan = partition::make_plan(*g, p, planner);
        for (VertexId v = 0; v < g->size(); ++v) {
          if (g->vertex(v).is_input()) continue;
          const auto viable = partition::viable(g->resolved(v), p);
          EXPECT_NE(std::find(viable.begin(), viable.end(), plan.partitions[v]), viable.end())
              << planner << " p = " << p << " vertex " << v << " " << plan.partitions[v].str();
          if (g == &chain) {
            EXPECT_EQ(plan.partitions[v].num_join_results(), p) << planner << " " << plan.partitions[v].str();
          }
        }
      }
  // sqrt on a matrix product at p = 6: the 3 to the first output label, the 2 to the other.
  Graph mm;
  mm.output(builders::matrix_chain(mm, {60, 60, 60}, Dtype::f64));
  const partition::Plan sqrt = partition::make_plan(mm, 6, "sqrt");
  EXPECT_EQ(sqrt.partitions.back().str(), "{i:3,j:1,k:2}");
}

}  // namespace
