#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace {

using namespace einrel;

TEST(GraphBuilder, BuildsWhatTheFileLanguageBuilds) {
  Graph g;
  const auto a = g.input("A", Dtype::f64, {1000, 100});
  const auto b = g.input("B", Dtype::f64, {100, 1000});
  const auto t = g.einsum("ij,jk->ik", a, b);
  EinsumOptions distance;
  distance.name = "D";
  distance.join = JoinOp::sqdiff;
  distance.agg = AggOp::max;
  const auto d = g.einsum("ij,jk->ik", a, b, distance);
  const auto s = g.softmax(t, "S");
  g.output(t);
  g.output(d);
  g.output(s);
  g.validate();

  const Graph f = parse_graph(R"(input A f64[1000,100]
input B f64[100,1000]
t2 = einsum("ij,jk->ik", A, B)
D = einsum("ij,jk->ik", A, B, join=sqdiff, agg=max)
S = softmax(t2)
output t2, D, S
)",
                              "same.ein");
  EXPECT_EQ(print_graph(g), print_graph(f));
}

// drivers/examples/llama_layer.ein is the builder's layer at its shape, written out with comments.
TEST(GraphBuilder, LlamaLayerIsTheExampleFile) {
  Graph g;
  const VertexId x = g.input("x", Dtype::f64, {256, 256});
  const VertexId out = builders::llama_layer(g, x, {256, 256, 8, 32, 704, 1e-5});
  g.output(out);
  std::ifstream file(EINREL_EXAMPLES_DIR "/llama_layer.ein");
  ASSERT_TRUE(file) << EINREL_EXAMPLES_DIR "/llama_layer.ein";
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(print_graph(parse_graph(text.str(), "llama_layer.ein")), print_graph(g));
  // 6 vertices per RMSNorm, 3 projections, 4 per RoPE, 3 for the scores, 4 for the softmax, 3 more for the
  // attention and its residual, 7 for SwiGLU and the residual; 14 inputs.
  EXPECT_EQ(std::count_if(g.vertices().begin(), g.vertices().end(), [](const Vertex& v) { return !v.is_input(); }),
            2 * 6 + 3 + 2 * 4 + 3 + 4 + 3 + 7);
  EXPECT_EQ(g.size(), 40u + 14u);
  EXPECT_EQ(g.vertex(g.outputs()[0]).bound, (Bound{256, 256}));
  EXPECT_THROW(builders::llama_layer(g, x, {128, 256, 8, 32, 704, 1e-5}, "y_"), Error);
}

TEST(GraphBuilder, GeneratedNamesAreFresh) {
  Graph g;
  const auto x = g.input("t1", Dtype::f32, {3});
  const auto y = g.einsum("i->", x);
  EXPECT_EQ(g.vertex(y).name, "t2");
  const auto z = g.einsum("i,->i", x, y);
  EXPECT_EQ(g.vertex(z).name, "t3");
}

TEST(GraphBuilder, FailedCallsLeaveTheGraphUnchanged) {
  Graph g;
  const auto a = g.input("A", Dtype::f64, {2, 3});
  const auto c = g.input("C", Dtype::f64, {4, 2});
  EXPECT_THROW(g.einsum("ij,jk,kl->il", {a, a, c}), OperandError);  // k: 3 vs 4
  EXPECT_THROW(g.einsum("ij,jk->ik", a, c), OperandError);
  EXPECT_THROW(g.einsum("ij->i", a, EinsumOptions{JoinOp::add, AggOp::sum, {}, "", {}}), Error);
  EXPECT_THROW(g.input("A", Dtype::f64, {2}), Error);
  EXPECT_THROW(g.input("bad name", Dtype::f64, {2}), Error);
  EXPECT_THROW(g.input("Z", Dtype::f64, {0}), Error);
  EXPECT_THROW(g.validate(), Error);  // no output yet
  EXPECT_EQ(g.size(), 2u);
  const auto s = g.softmax(a, "S");
  EXPECT_THROW(g.softmax(a, "S"), Error);
  EXPECT_EQ(g.size(), 6u);
  g.output(s);
  EXPECT_THROW(g.output(s), Error);
  EXPECT_THROW(g.output(99), Error);
  g.validate();
}

// find() answers every vertex by its name, and no name of a failed call: the n-ary einsum that failed
// (whatever binary vertices it had added) leaves its name and its intermediates' names free.
TEST(GraphBuilder, NamesAreFoundAfterFailedCalls) {
  Graph g;
  const auto a = g.input("A", Dtype::f64, {2, 3});
  const auto b = g.input("B", Dtype::f64, {3, 4});
  const auto c = g.input("C", Dtype::f64, {5, 2});
  EinsumOptions named;
  named.name = "N";
  EXPECT_THROW(g.einsum("ij,jk,kl->il", {a, b, c}, named), OperandError);  // k: 4 vs 5
  EXPECT_EQ(g.size(), 3u);
  EXPECT_FALSE(g.find("N"));
  const auto n = g.einsum("ij,jk,kl->il", {a, b, g.input("D", Dtype::f64, {4, 2})}, named);
  EXPECT_EQ(g.find("N"), n);
  for (VertexId v = 0; v < g.size(); ++v) EXPECT_EQ(g.find(g.vertex(v).name), v) << g.vertex(v).name;
  EXPECT_FALSE(g.find("n"));
}

TEST(GraphBuilder, MatrixChain) {
  Graph g;
  const auto p = builders::matrix_chain(g, {10, 20, 30, 40, 50}, Dtype::f64);
  EXPECT_EQ(g.vertex(p).name, "P3");
  EXPECT_EQ(g.vertex(p).bound, (Bound{10, 50}));
  EXPECT_EQ(g.size(), 4u + 3u);
  EXPECT_THROW(builders::matrix_chain(g, {10, 20}, Dtype::f64, "x"), Error);
}

TEST(GraphBuilder, MatrixChainProgram) {
  Graph square;
  const auto r = builders::matrix_chain_program(square, 64, false, Dtype::f64);
  EXPECT_EQ(square.vertex(r).bound, (Bound{64, 64}));
  EXPECT_EQ(square.vertex(r).einsum->join, JoinOp::add);
  Graph skewed;
  builders::matrix_chain_program(skewed, 100, true, Dtype::f32);
  EXPECT_EQ(skewed.vertex(*skewed.find("A")).bound, (Bound{100, 10}));
  EXPECT_EQ(skewed.vertex(*skewed.find("D")).bound, (Bound{10, 1000}));
  EXPECT_EQ(skewed.vertex(*skewed.find("E")).bound, (Bound{1000, 100}));
  EXPECT_EQ(skewed.vertex(*skewed.find("DE")).bound, (Bound{10, 100}));
  Graph tiny;
  EXPECT_THROW(builders::matrix_chain_program(tiny, 5, true, Dtype::f64), Error);
}

TEST(GraphBuilder, MultiHeadAttentionFollowsThePaper) {
  Graph g;
  const builders::AttentionShape shape{16, 12, 3, 4};
  const auto q = g.input("Q", Dtype::f32, {16, 12});
  const auto k = g.input("K", Dtype::f32, {16, 12});
  const auto v = g.input("V", Dtype::f32, {16, 12});
  const auto y = builders::multi_head_attention(g, q, k, v, shape, "L0_");
  EXPECT_EQ(g.vertex(y).name, "L0_Y");
  EXPECT_EQ(g.vertex(y).bound, (Bound{16, 12}));
  auto vertex = [&](const char* name) -> const Vertex& { return g.vertex(*g.find(name)); };
  EXPECT_EQ(vertex("L0_WQ").bound, (Bound{12, 3, 4}));
  EXPECT_EQ(vertex("L0_QH").einsum->equation(), "sa,ahd->shd");
  EXPECT_EQ(vertex("L0_QH").bound, (Bound{16, 3, 4}));
  EXPECT_EQ(vertex("L0_T1").einsum->equation(), "shd,thd->hst");
  EXPECT_EQ(vertex("L0_T1").bound, (Bound{3, 16, 16}));
  EXPECT_EQ(vertex("L0_T2").einsum->map.kind, MapKind::scale);
  EXPECT_DOUBLE_EQ(vertex("L0_T2").einsum->map.constant, 0.5);    // 1/sqrt(d), d = 4
  EXPECT_EQ(vertex("L0_T3__max").einsum->equation(), "abc->ab");  // softmax over s'
  EXPECT_EQ(vertex("L0_O").einsum->equation(), "hst,thd->shd");
  EXPECT_EQ(vertex("L0_Y").einsum->equation(), "shd,ahd->sa");
  EXPECT_EQ(g.size(), 3u + 4u + 5u + 4u + 2u);  // inputs, weights, QH KH VH T1 T2, softmax, O Y
}

TEST(GraphBuilder, FeedForwardAndTransformerLayer) {
  Graph g;
  const auto x = g.input("X", Dtype::f64, {8, 6});
  const auto f = builders::feed_forward(g, x, 10, "ffn_");
  EXPECT_EQ(g.vertex(f).bound, (Bound{8, 6}));
  const Vertex& h = g.vertex(*g.find("ffn_H"));
  EXPECT_EQ(h.einsum->join, JoinOp::add);
  EXPECT_EQ(h.einsum->map.kind, MapKind::relu);
  EXPECT_EQ(h.bound, (Bound{8, 10}));

  VertexId layer = x;
  for (int l = 0; l < 2; ++l)
    layer = builders::transformer_layer(g, layer, {8, 6, 2, 3}, 12, "L" + std::to_string(l) + "_");
  EXPECT_EQ(g.vertex(layer).name, "L1_R2");
  EXPECT_EQ(g.vertex(layer).bound, (Bound{8, 6}));
  g.output(layer);
  g.validate();
  // A builder's graph is a graph like any other: it prints and parses back.
  EXPECT_EQ(print_graph(parse_graph(print_graph(g), "layers.ein")), print_graph(g));
}

}  // namespace
