#include <einrel_ContractionOrder.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_GraphMacros.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace einrel;

TEST(GraphFile, ParsesInputsEinsumsOutputsAndComments) {
  const Graph g = parse_graph(R"(# a matrix product and a reduction
input  A f64[1000,100]   # left
input  B f64[100,1000]

T = einsum("ij,jk->ik", A, B)
R = einsum("ij->i", T, agg=sum)
s = einsum("i,i", R, R, join=mul)
output T, R
output s
)",
                              "g.ein");
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g.vertex(0).bound, (Bound{1000, 100}));
  EXPECT_TRUE(g.vertex(0).is_input());
  EXPECT_EQ(g.vertex(0).origin.str(), "g.ein:2:8");
  const Vertex& t = g.vertex(2);
  EXPECT_EQ(t.name, "T");
  EXPECT_EQ(t.bound, (Bound{1000, 1000}));
  EXPECT_EQ(t.inputs, (std::vector<VertexId>{0, 1}));
  EXPECT_EQ(t.einsum->equation(), "ij,jk->ik");
  EXPECT_EQ(g.vertex(3).bound, (Bound{1000}));
  EXPECT_EQ(g.vertex(4).bound, Bound{});  // implicit "i,i" -> scalar
  EXPECT_EQ(g.outputs(), (std::vector<VertexId>{2, 3, 4}));
}

TEST(GraphFile, ScalarInputsAndF32) {
  const Graph g = parse_graph("input c f32[]\ninput x f32[3]\ny = einsum(\",i->i\", c, x)\noutput y\n", "s.ein");
  EXPECT_EQ(g.vertex(0).bound, Bound{});
  EXPECT_EQ(g.vertex(2).dtype, Dtype::f32);
}

// Each malformed graph gives a ParseError whose message starts with file:line:col and names the problem.
struct Malformed {
  const char* text;
  const char* location;
  const char* message;
};

class GraphFileErrors : public ::testing::TestWithParam<Malformed> {};

TEST_P(GraphFileErrors, NameLocationAndProblem) {
  const Malformed& m = GetParam();
  try {
    parse_graph(m.text, "bad.ein");
    FAIL() << "parsed: " << m.text;
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(std::string(m.location) + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(m.message), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
    for (const char c : what)  // unprintable input bytes are quoted escaped (0x1c splits lines for many readers)
      EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) << what;
  }
}

constexpr const char* ab = "input A f64[4,5]\ninput B f64[5,6]\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, GraphFileErrors,
    ::testing::Values(
        Malformed{"", "bad.ein:1:1", "empty graph"}, Malformed{"# only a comment\n\n", "bad.ein:1:1", "empty graph"},
        Malformed{"input A f64[2,2]\n", "bad.ein:2:1", "expected an 'output NAME' statement"},
        Malformed{"input A f16[2,2]\n", "bad.ein:1:9", "unknown dtype 'f16'"},
        Malformed{"input A f64[2,2]\x1c\n", "bad.ein:1:17", "found '\\x1c'"},
        Malformed{"\x1cinput A f64[2,2]\n", "bad.ein:1:1", "found '\\x1c'"},
        Malformed{"input A f64[2,2]\nB = einsum(\"i\x1cj->ij\", A)\n", "bad.ein:2:14", "invalid character '\\x1c'"},
        Malformed{"input A f64[2,2]\nB = einsum(\"ij->ij\", A, map=\"r\x7f\")\n", "bad.ein:2:29",
                  "found string 'r\\x7f'"},
        Malformed{"input A f64[2,0]\n", "bad.ein:1:15", "positive integer"},
        Malformed{"input A f64[2,-3]\n", "bad.ein:1:15", "positive integer"},
        Malformed{"input A f64[2,x]\n", "bad.ein:1:15", "expected an extent"},
        Malformed{"input A f64[2,2\n", "bad.ein:1:16", "expected ']'"},
        Malformed{"input A f64 2,2]\n", "bad.ein:1:13", "expected '['"},
        Malformed{"input A f64[1,1,1,1,1,1,1,1,1]\n", "bad.ein:1:7", "at most 8 dimensions"},
        Malformed{"input A f64[2]\ninput A f64[2]\n", "bad.ein:2:7", "'A' is already defined at bad.ein:1:7"},
        Malformed{"input A f64[2] junk\n", "bad.ein:1:16", "expected end of statement"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", C)\n", "bad.ein:2:20", "unknown tensor 'C'"},
        Malformed{"input A f64[2]\noutput Z\n", "bad.ein:2:8", "unknown tensor 'Z'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A)\noutput B, B\n", "bad.ein:3:11", "already an output"},
        Malformed{"input A f64[2]\nB = foo(\"i->i\", A)\n", "bad.ein:2:5",
                  "unknown function 'foo' (expected einsum or softmax)"},
        Malformed{"input A f64[2]\nB = einsum(i->i, A)\n", "bad.ein:2:12",
                  "expected the equation string, e.g. \"ij,jk->ik\", found 'i'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i, A)\n", "bad.ein:2:12", "closing '\"'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\" A)\n", "bad.ein:2:19", "expected ')'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, join=sqrt)\n", "bad.ein:2:28",
                  "expected a join op (mul, add, sub, div, max, min, sqdiff, absdiff, eq, first), found 'sqrt'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->\", A, agg=mean)\n", "bad.ein:2:26", "expected an agg op"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, map=cube)\n", "bad.ein:2:27", "expected a map"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, map=scale)\n", "bad.ein:2:32",
                  "expected '(' after map=scale: it takes a constant"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, map=scale(x))\n", "bad.ein:2:33", "expected a number"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, map=pow(1.5.2))\n", "bad.ein:2:31",
                  "expected a finite decimal number, found '1.5.2'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, map=pow(1e999))\n", "bad.ein:2:31", "finite"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, map=exp(2))\n", "bad.ein:2:30", "takes no constant"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, agg=max, agg=min)\n", "bad.ein:2:32",
                  "found a second 'agg='"},
        Malformed{"input A f64[2]\nB = einsum(\"i,i->i\", A, join=add, A)\n", "bad.ein:2:35", "operands come before"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, join=add)\n", "bad.ein:2:1", "needs two operands"},
        Malformed{"input A f64[2]\nB = einsum(\"->\")\n", "bad.ein:2:12", "at least one operand"},
        Malformed{"input A f64[2,3]\nB = einsum(\"ij,jk,kl->il\", A, A, A, join=sqdiff)\n", "bad.ein:2:1",
                  "exact only for join=mul,agg=sum"},
        Malformed{"input A f64[2,3]\ninput B f64[3,3]\ninput C f64[4,2]\nV = einsum(\"ij,jk,kl->il\", A, B, C)\n",
                  "bad.ein:4:34", "shape mismatch for label 'k': it is 3 in 'B' but 4 in 'C'"},
        Malformed{"input A f64[2,3]\nS__max = einsum(\"ij->i\", A)\nS = softmax(A)\n", "bad.ein:3:1",
                  "'S__max' is already defined at bad.ein:2:1"},
        Malformed{"input c f64[]\nS = softmax(c)\n", "bad.ein:2:13", "rank >= 1"},
        Malformed{"input A f64[2]\nS = softmax(A, A)\n", "bad.ein:2:14", "it takes one tensor"},
        Malformed{"input A f64[2]\nS = softmax(Q)\n", "bad.ein:2:13", "unknown tensor 'Q'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, mode=x)\n", "bad.ein:2:23", "unknown keyword argument"},
        Malformed{"input A f64[2]\nB = einsum(\"i$->i\", A)\n", "bad.ein:2:14", "invalid character '$'"},
        Malformed{"input A f64[2,2]\nB = einsum(\"ii->i\", A)\n", "bad.ein:2:14", "repeated labels"},
        Malformed{"input A f64[2]\nB = einsum(\"...->\", A)\n", "bad.ein:2:13", "ellipsis"},
        Malformed{"input A f64[2]\nB = einsum(\"i->j\", A)\n", "bad.ein:2:16", "output label 'j'"},
        Malformed{"input A f64[2]\nB = einsum(\"i,i->i\", A)\n", "bad.ein:2:13", "2 operand(s) but 1"},
        Malformed{"input A f64[2]\nB = einsum(\"ij->i\", A)\n", "bad.ein:2:21", "rank 1"},
        Malformed{"input A f64[4,5]\ninput B f64[4,6]\nT = einsum(\"ij,jk->ik\", A, B)\n", "bad.ein:3:28",
                  "shape mismatch for label 'j': it is 5 in 'A' but 4 in 'B'"},
        Malformed{"input A f64[4]\ninput B f32[4]\nT = einsum(\"i,i->i\", A, B)\n", "bad.ein:3:25", "share a dtype"},
        Malformed{"input A f64[2]\n1B = einsum(\"i->i\", A)\n", "bad.ein:2:1", "expected 'input'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A) @\n", "bad.ein:2:23",
                  "expected end of statement, found '@'"},
        Malformed{"input A f64[2]\nB == einsum(\"i->i\", A)\n", "bad.ein:2:4", "expected a function"}));

TEST(GraphFile, ParsesEveryOpAndConstant) {
  const Graph g = parse_graph(R"(input A f32[3,4]
input B f32[4,5]
D = einsum("ij,jk->ik", A, B, join=sqdiff, agg=max)
E = einsum("ij->i", A, map=exp, agg=prod)
W = einsum("ij->ji", A, map=scale(-2.5e-1))
P = einsum("ij,jk", A, B, join=absdiff, agg=min, map=pow(3))
output D, E, W, P
)",
                              "ops.ein");
  const EinSum& d = *g.vertex(2).einsum;
  EXPECT_EQ(d.join, JoinOp::sqdiff);
  EXPECT_EQ(d.agg, AggOp::max);
  EXPECT_EQ(g.vertex(3).einsum->map, (MapOp{MapKind::exp, 0}));
  EXPECT_EQ(g.vertex(3).einsum->agg, AggOp::prod);
  EXPECT_EQ(g.vertex(4).einsum->map, (MapOp{MapKind::scale, -0.25}));
  EXPECT_EQ(g.vertex(5).einsum->map, (MapOp{MapKind::pow, 3}));
  EXPECT_EQ(g.vertex(5).einsum->output, "ik");
  EXPECT_EQ(g.vertex(5).dtype, Dtype::f32);
}

TEST(GraphFile, SoftmaxExpandsToFourVertices) {
  const Graph g = parse_graph("input X f64[2,3,5]\nS = softmax(X)\noutput S\n", "s.ein");
  ASSERT_EQ(g.size(), 5u);
  const std::vector<std::string> names = {"S__max", "S__exp", "S__sum", "S"};
  const std::vector<std::string> equations = {"abc->ab", "abc,ab->abc", "abc->ab", "abc,ab->abc"};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(g.vertex(k + 1).name, names[k]);
    EXPECT_EQ(g.vertex(k + 1).einsum->equation(), equations[k]);
    EXPECT_EQ(g.vertex(k + 1).origin.str(), "s.ein:2:1");
  }
  EXPECT_EQ(g.vertex(1).einsum->agg, AggOp::max);
  EXPECT_EQ(g.vertex(2).einsum->join, JoinOp::sub);
  EXPECT_EQ(g.vertex(2).einsum->map.kind, MapKind::exp);
  EXPECT_EQ(g.vertex(2).inputs, (std::vector<VertexId>{0, 1}));
  EXPECT_EQ(g.vertex(4).einsum->join, JoinOp::div);
  EXPECT_EQ(g.vertex(4).inputs, (std::vector<VertexId>{2, 3}));
  EXPECT_EQ(g.vertex(4).bound, (Bound{2, 3, 5}));
  EXPECT_EQ(g.outputs(), std::vector<VertexId>{4});

  const Graph v = parse_graph("input x f32[7]\ny = softmax(x)\noutput y\n", "v.ein");
  EXPECT_EQ(v.vertex(1).einsum->equation(), "a->");
  EXPECT_EQ(v.vertex(2).einsum->equation(), "a,->a");
}

TEST(GraphFile, NaryEinsumJoinsTheSmallestIntermediateFirst) {
  // B×C gives [10,10]: smaller than A×B ([1000,1000]) and A×C ([1000,10,1000,10]).
  const Graph g = parse_graph(R"(input A f64[1000,10]
input B f64[10,1000]
input C f64[1000,10]
V = einsum("ij,jk,kl->il", A, B, C)
output V
)",
                              "n.ein");
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g.vertex(3).name, "V__1");
  EXPECT_EQ(g.vertex(3).einsum->equation(), "jk,kl->jl");
  EXPECT_EQ(g.vertex(3).inputs, (std::vector<VertexId>{1, 2}));
  EXPECT_EQ(g.vertex(4).name, "V");
  EXPECT_EQ(g.vertex(4).einsum->equation(), "ij,jl->il");
  EXPECT_EQ(g.vertex(4).inputs, (std::vector<VertexId>{0, 3}));
}

TEST(GraphFile, NaryOrderAggregatesEarlyAndKeepsTheFirstOfEqualOrders) {
  EinSum e = EinSum::parse("ai,bi,ci->abc", 3);
  auto steps = contraction_order(resolve(e, {{2, 5}, {2, 5}, {2, 5}})).steps;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].first, 1u);  // every order costs 100 flops: the first split found keeps operand 0 alone
  EXPECT_EQ(steps[0].second, 2u);
  EXPECT_EQ(steps[0].labels, "bic");
  EXPECT_EQ(steps[1].labels, "abc");
  // A label in one operand only is aggregated in the first join that consumes the operand.
  e = EinSum::parse("ij,jk,kl,lm->m", 4);
  steps = contraction_order(resolve(e, {{9, 2}, {2, 3}, {3, 4}, {4, 5}})).steps;
  EXPECT_EQ(steps.size(), 3u);
  for (const NaryStep& step : steps) EXPECT_EQ(step.labels.find('i'), std::string::npos) << step.labels;
  EXPECT_EQ(steps.back().labels, "m");
  EXPECT_TRUE(decomposes_pairwise(e));
  e.join = JoinOp::add;
  EXPECT_FALSE(decomposes_pairwise(e));
  e.agg = AggOp::max;
  EXPECT_TRUE(decomposes_pairwise(e));
}

TEST(GraphFile, PrinterRoundTrips) {
  const std::string text = R"(input A f64[13,7]
input B f64[7,9]
input T2 f64[9,5]
input c f64[]
T = einsum("ij,jk->ik", A, B)
D = einsum("ij,jk", A, B, join=sqdiff, agg=max)
R = einsum("ij->i", T, map=exp)
E = einsum("ij,i->ij", T, R, join=sub)
S = softmax(T)
V = einsum("ij,jk,kl->il", A, B, T2, join=add, agg=min)
W = einsum("ij->ij", T, map=scale(0.1))
P = einsum("ij->", A, map=shift(-1.5e-7), agg=prod)
Q = einsum(",ij->ji", c, W, join=div, map=pow(-0.3333333333333333))
output T, D, S, V
output W, E, P, Q
)";
  const Graph g = parse_graph(text, "r.ein");
  const std::string printed = print_graph(g);
  const Graph h = parse_graph(printed, "printed.ein");
  ASSERT_EQ(h.size(), g.size());
  for (VertexId v = 0; v < g.size(); ++v) {
    EXPECT_EQ(h.vertex(v).name, g.vertex(v).name);
    EXPECT_EQ(h.vertex(v).dtype, g.vertex(v).dtype);
    EXPECT_EQ(h.vertex(v).bound, g.vertex(v).bound);
    EXPECT_EQ(h.vertex(v).inputs, g.vertex(v).inputs);
    EXPECT_EQ(h.vertex(v).einsum, g.vertex(v).einsum) << g.vertex(v).name;
  }
  EXPECT_EQ(h.outputs(), g.outputs());
  EXPECT_EQ(print_graph(h), printed);
  EXPECT_NE(printed.find("W = einsum(\"ij->ij\", T, map=scale(0.1))\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("input c f64[]\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("output T, D, S, V, W, E, P, Q\n"), std::string::npos) << printed;
}

TEST(GraphFile, UnreadableFileIsAnError) { EXPECT_THROW(read_graph_file("/nonexistent/graph.ein"), Error); }

TEST(GraphFile, AbSharedPrefixIsValid) {
  const Graph g = parse_graph(std::string(ab) + "T = einsum(\"ij,jk->ik\", A, B)\noutput T\n", "ok.ein");
  EXPECT_EQ(g.vertex(2).bound, (Bound{4, 6}));
}

}  // namespace
