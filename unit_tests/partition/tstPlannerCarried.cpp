// plan_carried: the updated parameters of a training step re-planned with their loop-carried edges.
#include <einrel_Carried.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_Gradient.hpp>
#include <einrel_GraphFile.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;
using namespace einrel::partition;

TEST(PlannerCarried, NoWorseThanThePlanWithFreeInputs) {
  const Graph g = parse_graph(R"(input X f64[64,32]
input W1 f64[32,48]
input W2 f64[48,8]
H = einsum("nf,fh->nh", X, W1, map=tanh)
Z = einsum("nh,hk->nk", H, W2)
L = einsum("nk->", Z, map=square)
output L
)",
                              "g.ein");
  const SgdStep step = sgd_step_graph(g, "L", {"W1", "W2"}, 0.1);
  for (const std::string planner : {"eindecomp", "data"}) {
    for (Extent p : {2, 4, 16}) {
      Plan plan = make_plan(step.graph, p, planner);
      const double before = plan.total_cost + carried_cost(step.graph, plan.partitions, step.carried, plan.cost_model);
      plan_carried(step.graph, plan, step.carried);
      const double after = plan.total_cost + carried_cost(step.graph, plan.partitions, step.carried, plan.cost_model);
      EXPECT_LE(after, before * (1 + 1e-12)) << planner << " p=" << p;
      // The recosted plan is what the one cost function says.
      double total = 0;
      for (const VertexCost& c : evaluate_cost(step.graph, plan.partitions, plan.cost_model)) total += c.total();
      EXPECT_DOUBLE_EQ(plan.total_cost, total);
      for (const auto& [w, next] : step.carried) plan.partitions[next].check_fits(step.graph.resolved(next));
    }
  }
}

TEST(PlannerCarried, AReaderThatWantsRowsGetsRows) {
  // W is read split by rows (i) only; the update is free to be cut either way, so it takes the rows.
  const Graph g = parse_graph(R"(input W f64[16,16]
input X f64[16]
T = einsum("ij,j->i", W, X)
L = einsum("i->", T, map=square)
output L
)",
                              "g.ein");
  const SgdStep step = sgd_step_graph(g, "L", {"W"}, 0.1);
  Plan plan = make_plan(step.graph, 4, "eindecomp");
  plan_carried(step.graph, plan, step.carried);
  const VertexId t = *step.graph.find("T");
  const VertexId next = step.carried[0].second;
  EXPECT_EQ(plan.partitions[next].project("ab"), plan.partitions[t].project("ij"));
  EXPECT_EQ(carried_cost(step.graph, plan.partitions, step.carried, plan.cost_model), 0.0);
}

}  // namespace
