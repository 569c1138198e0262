#include <einrel_GraphFile.hpp>

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
  }
}

constexpr const char* ab = "input A f64[4,5]\ninput B f64[5,6]\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, GraphFileErrors,
    ::testing::Values(
        Malformed{"", "bad.ein:1:1", "empty graph"}, Malformed{"# only a comment\n\n", "bad.ein:1:1", "empty graph"},
        Malformed{"input A f64[2,2]\n", "bad.ein:2:1", "expected an 'output NAME' statement"},
        Malformed{"input A f16[2,2]\n", "bad.ein:1:9", "unknown dtype 'f16'"},
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
        Malformed{"input A f64[2]\nB = foo(\"i->i\", A)\n", "bad.ein:2:5", "unknown function 'foo'"},
        Malformed{"input A f64[2]\nB = einsum(i->i, A)\n", "bad.ein:2:12",
                  "expected the equation string, e.g. \"ij,jk->ik\", found 'i'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i, A)\n", "bad.ein:2:12", "closing '\"'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\" A)\n", "bad.ein:2:19", "expected ')'"},
        Malformed{"input A f64[2]\nB = einsum(\"i->i\", A, join=sqrt)\n", "bad.ein:2:28", "unsupported join op 'sqrt'"},
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

TEST(GraphFile, UnreadableFileIsAnError) { EXPECT_THROW(read_graph_file("/nonexistent/graph.ein"), Error); }

TEST(GraphFile, AbSharedPrefixIsValid) {
  const Graph g = parse_graph(std::string(ab) + "T = einsum(\"ij,jk->ik\", A, B)\noutput T\n", "ok.ein");
  EXPECT_EQ(g.vertex(2).bound, (Bound{4, 6}));
}

}  // namespace
