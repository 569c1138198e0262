// What `einrel plan` prints: text, JSON and Graphviz.
#include <einrel_GraphFile.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_PlanExport.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;
using namespace einrel::cli;

Graph two_vertices() {
  return parse_graph(R"(input A f64[8,8]
input B f64[8,8]
T = einsum("ij,jk->ik", A, B)
r = einsum("ik->i", T)
output r
)",
                     "g.ein");
}

// The plan `einrel plan --procs p --planner planner --cost-model model` prints, costed on p ranks.
engine::FittedPlan chosen(const Graph& g, Extent p, const std::string& planner,
                          partition::CostModel model = partition::CostModel::engine) {
  engine::Options options;
  options.procs = p;
  options.planner = planner;
  options.cost_model = model;
  return engine::choose_plan(g, static_cast<int>(p), options);
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing from\n" << text;
}

TEST(PlanExport, JsonHasTheContractFields) {
  const Graph g = two_vertices();
  const std::string json = plan_json(g, chosen(g, 8, "sqrt", partition::CostModel::paper));
  expect_contains(json, "\"procs\": 8");
  expect_contains(json, "\"planner\": \"sqrt\"");
  expect_contains(json, "\"cost_model\": \"paper\"");
  expect_contains(json, "\"total_cost\": ");
  expect_contains(json,
                  "{\"name\": \"T\", \"equation\": \"ij,jk->ik\", \"inputs\": [\"A\", \"B\"], \"shape\": [8, 8], "
                  "\"partition\": {\"i\": 2, \"j\": 2, \"k\": 2}, \"cost\": {\"join\": 256, \"agg\": 64, "
                  "\"repartition\": 0}}");
  expect_contains(json, "{\"name\": \"r\", \"equation\": \"ik->i\"");
}

TEST(PlanExport, JsonCostsKeepEveryDigit) {
  const Graph g = parse_graph("input A f64[123457,98765]\nr = einsum(\"ij->i\", A)\noutput r\n", "g.ein");
  // J · n_X = 123457 · 98765 at p = 1: eleven digits, all printed.
  expect_contains(plan_json(g, chosen(g, 1, "data", partition::CostModel::paper)), "\"join\": 12193230605,");
}

TEST(PlanExport, TextListsEveryVertexAndTheTotal) {
  const Graph g = two_vertices();
  const std::string text = plan_text(g, chosen(g, 4, "eindecomp"));
  expect_contains(text, "plan for p = 4: predicted cost");
  expect_contains(text, "floats (engine cost model)");
  expect_contains(text, "ij,jk->ik");
  expect_contains(text, "ik->i");
  expect_contains(text, "  total: ");
}

TEST(PlanExport, DotDrawsPartitionsAndRepartitionCosts) {
  const Graph g = two_vertices();
  const std::string dot = plan_dot(g, chosen(g, 8, "sqrt", partition::CostModel::paper));
  expect_contains(dot, "digraph plan {");
  expect_contains(dot, "v2 [label=\"T = ij,jk->ik\\n[8,8]  {i:2,j:2,k:2}\\njoin 256  agg 64\\nrepartition in 0\"];");
  expect_contains(dot, "v0 -> v2 [label=\"[2,2]\", style=dashed];");
  // T leaves [2,2] blocks; r (sqrt at p = 8: i:4, k:2) wants [4,2].
  expect_contains(dot, "v2 -> v3 [label=\"[2,2] -> [4,2]\\nrepartition ");
  expect_contains(dot, "peripheries=2");
}

}  // namespace
