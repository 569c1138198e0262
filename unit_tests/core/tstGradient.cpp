// The structure of gradient graphs and their errors; their values are checked against finite differences
// end to end by system_tests/cli/check_grad_numpy.py.
#include <einrel_Gradient.hpp>
#include <einrel_GraphFile.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {

using namespace einrel;

const Vertex& named(const Graph& g, const std::string& name) {
  const auto v = g.find(name);
  EXPECT_TRUE(v.has_value()) << name;
  return g.vertex(*v);
}

TEST(Gradient, ContractionOperandsByTheLabelSwappingRule) {
  const Graph g = parse_graph(R"(input A f64[3,4]
input B f64[4,5]
input C f64[3,5]
T = einsum("ij,jk->ik", A, B)
L = einsum("ik,ik->", T, C)
output L
)",
                              "g.ein");
  const Graph d = gradient_graph(g, "L", {"A", "B"});
  ASSERT_EQ(d.outputs().size(), 3u);
  EXPECT_EQ(d.vertex(d.outputs()[0]).name, "L");
  const Vertex& ga = named(d, "grad_A");
  const Vertex& gb = named(d, "grad_B");
  EXPECT_EQ(d.vertex(d.outputs()[1]).name, "grad_A");
  EXPECT_EQ(ga.bound, (Bound{3, 4}));
  EXPECT_EQ(gb.bound, (Bound{4, 5}));
  // dL/dA = dL/dT with B, T's labels swapped with A's; one vertex each.
  EXPECT_EQ(ga.einsum->equation(), "ik,jk->ij");
  EXPECT_TRUE(ga.einsum->is_contraction());
  EXPECT_EQ(d.vertex(ga.inputs[1]).name, "B");
  EXPECT_EQ(gb.einsum->equation(), "ik,ij->jk");
  EXPECT_EQ(d.vertex(gb.inputs[1]).name, "A");
  // The gradient of T, read by both, is C times the seed: no vertex for the loss's other operand.
  EXPECT_EQ(ga.inputs[0], gb.inputs[0]);
  // The printout reads back as the same graph.
  const Graph again = parse_graph(print_graph(d), "d.ein");
  EXPECT_EQ(print_graph(again), print_graph(d));
}

TEST(Gradient, SeveralConsumersAreSummed) {
  const Graph g = parse_graph(R"(input X f64[3]
A = einsum("i->i", X, map=exp)
B = einsum("i->i", X, map=square)
L = einsum("i,i->", A, B)
output L
)",
                              "g.ein");
  const Graph d = gradient_graph(g, "L", {"X"});
  const Vertex& gx = named(d, "grad_X");
  EXPECT_EQ(gx.einsum->join, JoinOp::add);
  EXPECT_EQ(gx.bound, Bound{3});
}

TEST(Gradient, SoftmaxShiftHasNoGradientPath) {
  const Graph g = parse_graph(R"(input X f64[2,5]
input Y f64[2,5]
P = softmax(X)
L = einsum("ij,ij->", P, Y)
output L
)",
                              "g.ein");
  const Graph d = gradient_graph(g, "L", {"X", "Y"});
  for (const Vertex& v : d.vertices()) {
    EXPECT_NE(v.name, "grad_P__max") << "the row maximum got a gradient";
    for (VertexId o : v.inputs) {
      if (d.vertex(o).name == "P__max") {
        EXPECT_EQ(v.name, "P__exp") << "only the forward pass reads P__max";
      }
    }
  }
  named(d, "grad_X");
}

TEST(Gradient, AnInputTheLossDoesNotReadGetsZeros) {
  const Graph g = parse_graph("input X f64[2]\ninput Y f64[2,3]\nL = einsum(\"i->\", X)\noutput L\n", "g.ein");
  const Graph d = gradient_graph(g, "L", {"Y", "X"});
  const Vertex& gy = named(d, "grad_Y");
  EXPECT_EQ(gy.bound, (Bound{2, 3}));
  EXPECT_EQ(gy.einsum->map, (MapOp{MapKind::scale, 0.0}));
  EXPECT_EQ(d.vertex(d.outputs()[1]).name, "grad_Y");
}

TEST(Gradient, PiecewiseConstantOpsGiveZeros) {
  const Graph g = parse_graph(R"(input X f64[4]
S = einsum("i->i", X, map=sign)
L = einsum("i->", S)
output L
)",
                              "g.ein");
  const Graph d = gradient_graph(g, "L", {"X"});
  EXPECT_EQ(named(d, "grad_X").einsum->map, (MapOp{MapKind::scale, 0.0}));
}

TEST(Gradient, ErrorsNameTheProblem) {
  const Graph g = parse_graph(R"(input A f64[3,4]
input grad_B f64[4]
T = einsum("ij->i", A)
L = einsum("i->", T)
output T
)",
                              "g.ein");
  auto message = [&](const std::string& loss, const std::vector<std::string>& wrt) {
    try {
      gradient_graph(g, loss, wrt);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("T", {"A"}), "gradient: the loss 'T' must be 0-d (a scalar); it is [3]");
  EXPECT_EQ(message("A", {"A"}), "gradient: the loss 'A' is an input; it must be computed by an einsum");
  EXPECT_EQ(message("Q", {"A"}), "gradient: the graph has no vertex named 'Q' (the loss)");
  EXPECT_EQ(message("L", {"Z"}), "gradient: the graph has no input named 'Z' to differentiate with respect to");
  EXPECT_EQ(message("L", {"T"}), "gradient: 'T' is computed by an einsum; gradients are taken with respect to inputs");
  EXPECT_EQ(message("L", {"A", "A"}), "gradient: 'A' is named twice");
  EXPECT_EQ(message("L", {"B"}), "gradient: the graph has no input named 'B' to differentiate with respect to");

  // A name the gradient would take, and a failure that leaves the graph as it was.
  Graph h = parse_graph("input B f64[4]\ngrad_B = einsum(\"i->i\", B)\nL = einsum(\"i->\", B)\noutput L\n", "h.ein");
  const std::size_t before = h.size();
  EXPECT_THROW(append_gradient(h, *h.find("L"), {*h.find("B")}), Error);
  EXPECT_EQ(h.size(), before);
}

TEST(Gradient, SgdStepUpdatesEveryParameterOnce) {
  const Graph g = parse_graph(R"(input X f64[4,3]
input W f64[3,2]
input b f64[2]
T = einsum("ij,jk->ik", X, W)
U = einsum("ik,k->ik", T, b, join=add, map=tanh)
L = einsum("ik->", U, map=square)
output U
)",
                              "g.ein");
  const SgdStep step = sgd_step_graph(g, "L", {"W", "b"}, 0.25);
  const Graph& d = step.graph;
  ASSERT_EQ(step.carried.size(), 2u);
  EXPECT_EQ(d.vertex(step.carried[0].first).name, "W");
  EXPECT_EQ(d.vertex(step.carried[0].second).name, "W__next");
  EXPECT_EQ(d.vertex(step.carried[1].second).name, "b__next");
  EXPECT_EQ(named(d, "W__step").einsum->map, (MapOp{MapKind::scale, 0.25}));
  EXPECT_EQ(named(d, "W__next").einsum->join, JoinOp::sub);
  EXPECT_EQ(d.vertex(step.loss).name, "L");
  ASSERT_EQ(d.outputs().size(), 3u);
  EXPECT_EQ(d.outputs()[0], step.loss);
  EXPECT_THROW(sgd_step_graph(g, "L", {"W"}, 0.0), Error);
  EXPECT_THROW(sgd_step_graph(g, "L", {"W"}, std::nan("")), Error);
}

}  // namespace
