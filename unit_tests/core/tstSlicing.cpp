// slice_graph: which vertices a sliced label reaches, how the passes and combinations are laid out, and where
// slicing is refused (docs/planner.md "Slicing").
#include <einrel_GraphFile.hpp>
#include <einrel_Slicing.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace einrel;

const char* attention = R"(input Q f64[16,8]
input K f64[16,8]
input V f64[16,8]
T = einsum("sd,td->st", Q, K)
P = softmax(T)
O = einsum("st,td->sd", P, V)
r = einsum("sd->d", O)
output O, r
)";

std::size_t count_named(const Graph& g, const std::string& prefix) {
  return static_cast<std::size_t>(std::count_if(g.vertices().begin(), g.vertices().end(), [&](const Vertex& v) {
    return v.name.compare(0, prefix.size(), prefix) == 0;
  }));
}

TEST(Slicing, RowsOfTheScoresReachEveryReaderThatKeepsThem) {
  const Graph g = parse_graph(attention, "attention.ein");
  const auto sliced = slice_graph(g, *g.find("T"), 0, 4);  // s: kept by softmax and O, aggregated by r
  ASSERT_TRUE(sliced);
  const Graph& s = sliced->graph;
  EXPECT_EQ(sliced->region_size, 7u);  // T, P's four vertices, O, r
  EXPECT_EQ(count_named(s, "T__pass"), 4u);
  EXPECT_EQ(s.vertex(*s.find("T__pass2")).slice, (VertexSlice{'s', 2, 4}));
  EXPECT_EQ(s.vertex(*s.find("r__pass1")).slice, (VertexSlice{'s', 1, 4}));
  // O carries s: its passes are added (each fills its rows); r aggregated s: summed, as its own agg says.
  const Vertex& O = s.vertex(*s.find("O"));
  EXPECT_EQ(O.einsum->join, JoinOp::add);
  EXPECT_EQ(s.vertex(O.inputs[1]).name, "O__pass3");
  EXPECT_EQ(s.vertex(O.inputs[0]).name, "O__upto2");
  EXPECT_EQ(s.vertex(*s.find("r")).einsum->join, JoinOp::add);
  EXPECT_FALSE(s.vertex(*s.find("O")).slice);
  // Inputs first, in their order; outputs keep their names and order.
  for (VertexId v = 0; v < 3; ++v) EXPECT_EQ(s.vertex(v).name, g.vertex(v).name);
  ASSERT_EQ(s.outputs().size(), 2u);
  EXPECT_EQ(s.vertex(s.outputs()[0]).name, "O");
  EXPECT_EQ(s.vertex(s.outputs()[1]).name, "r");
  for (VertexId v = 0; v < s.size(); ++v)
    EXPECT_EQ(sliced->combining[v], s.vertex(v).name == "O" || s.vertex(v).name == "r" ||
                                        s.vertex(v).name.find("__upto") != std::string::npos);
  EXPECT_EQ(sliced->describe(), "T sliced along dimension 0 in 4 passes (7 vertices per pass)");
}

TEST(Slicing, AMaxAggregationCombinesByMax) {
  const Graph g = parse_graph(R"(input A f64[8,6]
input B f64[6,10]
T = einsum("ij,jk->ik", A, B)
m = einsum("ik->k", T, agg=max)
output m
)",
                              "max.ein");
  const auto sliced = slice_graph(g, *g.find("T"), 0, 2);
  ASSERT_TRUE(sliced);
  EXPECT_EQ(sliced->graph.vertex(*sliced->graph.find("m")).einsum->join, JoinOp::max);
}

TEST(Slicing, IsRefusedWhereAPassWouldNeedTheWholeValue) {
  const Graph g = parse_graph(attention, "attention.ein");
  // t is what softmax reduces: its max and sum aggregate t, and the division reads them beside T's slice.
  EXPECT_FALSE(slice_graph(g, *g.find("T"), 1, 2));
  EXPECT_FALSE(slice_graph(g, *g.find("T"), 0, 3));  // 16 rows are no 3 chunks
  EXPECT_FALSE(slice_graph(g, *g.find("T"), 2, 2));  // no such dimension
  EXPECT_FALSE(slice_graph(g, *g.find("Q"), 0, 2));  // an input
  EXPECT_FALSE(slice_graph(g, *g.find("T"), 0, 1));
  // A reader taking the sliced value along two labels.
  const Graph d = parse_graph(R"(input A f64[8,8]
T = einsum("ij->ij", A, map=square)
U = einsum("ij,ji->ij", T, T)
output U
)",
                              "transpose.ein");
  EXPECT_FALSE(slice_graph(d, *d.find("T"), 0, 2));
  // A vertex outside the region between two of its vertices: r reads the aggregated value and feeds the region.
  const Graph c = parse_graph(R"(input A f64[8,8]
T = einsum("ij->ij", A, map=square)
s = einsum("ij->j", T)
r = einsum("j->j", s, map=sqrt)
U = einsum("ij,j->ij", T, r)
output U
)",
                              "cycle.ein");
  EXPECT_FALSE(slice_graph(c, *c.find("T"), 0, 2));
  EXPECT_TRUE(slice_graph(c, *c.find("T"), 1, 2));  // j: every vertex keeps it
}

TEST(Slicing, ProducersBeforeTheValueJoinWhereTheyCarryTheLabel) {
  const Graph g = parse_graph(R"(input X f64[16,8]
input W f64[8,8]
input K f64[16,8]
Q = einsum("sa,ab->sb", X, W)
R = einsum("sb->sb", Q, map=tanh)
T = einsum("sd,td->st", R, K)
P = softmax(T)
output P
)",
                              "before.ein");
  const auto readers = slice_graph(g, *g.find("T"), 0, 2);
  ASSERT_TRUE(readers);
  EXPECT_EQ(readers->region_size, 5u);  // T and the softmax
  EXPECT_FALSE(readers->before);
  const auto producers = slice_graph(g, *g.find("T"), 0, 2, true);
  ASSERT_TRUE(producers);
  EXPECT_TRUE(producers->before);
  EXPECT_EQ(producers->region_size, 7u);  // and R and Q, each a chunk of rows
  EXPECT_EQ(producers->graph.vertex(*producers->graph.find("Q__pass1")).slice, (VertexSlice{'s', 1, 2}));
  EXPECT_EQ(producers->describe(), "T sliced along dimension 0 in 2 passes (with its producers; 7 vertices per pass)");
  // Self-attention: T reads R along s and along t, so R cannot be computed a chunk of s at a time.
  const Graph self = parse_graph(R"(input X f64[16,8]
input W f64[8,8]
R = einsum("sa,ab->sb", X, W)
T = einsum("sd,td->st", R, R)
P = softmax(T)
output P
)",
                                 "self.ein");
  const auto alone = slice_graph(self, *self.find("T"), 0, 2, true);
  ASSERT_TRUE(alone);
  EXPECT_FALSE(alone->before);
  EXPECT_EQ(alone->region_size, 5u);
}

TEST(Slicing, AVertexTakesOnlyAPassOfOneOfItsLabels) {
  Graph g = parse_graph(attention, "attention.ein");
  const VertexId t = *g.find("T");
  EXPECT_THROW(g.slice_vertex(t, VertexSlice{'x', 0, 2}), Error);
  EXPECT_THROW(g.slice_vertex(t, VertexSlice{'s', 2, 2}), Error);
  EXPECT_THROW(g.slice_vertex(t, VertexSlice{'s', 0, 3}), Error);
  EXPECT_THROW(g.slice_vertex(*g.find("Q"), VertexSlice{'s', 0, 2}), Error);
  g.slice_vertex(t, VertexSlice{'t', 1, 4});
  EXPECT_EQ(g.vertex(t).slice, (VertexSlice{'t', 1, 4}));
}

}  // namespace
