// merge_contraction_chains: which explicit chains of binary contractions become one n-ary einsum, and what the
// merged graph keeps.
#include <einrel_ContractionChains.hpp>
#include <einrel_Graph.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;

EinsumOptions named(const std::string& name) {
  EinsumOptions o;
  o.name = name;
  return o;
}

TEST(ContractionChains, AnExplicitChainBecomesOneNaryEinsum) {
  Graph g;
  const VertexId a = g.input("A", Dtype::f64, {2048, 16});
  const VertexId b = g.input("B", Dtype::f64, {16, 2048});
  const VertexId c = g.input("C", Dtype::f64, {2048, 8});
  const VertexId ab = g.einsum("ij,jk->ik", a, b, named("AB"));  // 2048 x 2048: the costly way
  const VertexId d = g.einsum("pq,qr->pr", ab, c, named("D"));   // other letters in each vertex
  const VertexId t = g.einsum("pr->rp", d, named("T"));          // a unary reader: outside the chain
  g.output(t);
  const std::optional<Graph> merged = merge_contraction_chains(g);
  ASSERT_TRUE(merged.has_value());
  ASSERT_EQ(merged->nary_einsums().size(), 1u);
  const NaryEinsum& n = merged->nary_einsums()[0];
  EXPECT_EQ(n.equation, "ad,dc,cb->ab");  // letters in the order the chain is walked, from D's output
  EXPECT_EQ(n.einsum.arity(), 3u);
  EXPECT_EQ(merged->vertex(n.operands[0]).name, "A");
  EXPECT_EQ(merged->vertex(n.operands[1]).name, "B");
  EXPECT_EQ(merged->vertex(n.operands[2]).name, "C");
  // A·(B·C) first: B·C is 16 x 8.
  EXPECT_EQ(n.flops, 2.0 * 16 * 2048 * 8 + 2.0 * 2048 * 16 * 8);
  EXPECT_EQ(merged->vertex(n.steps.back()).name, "D");
  EXPECT_EQ(merged->vertex(n.steps.back()).bound, g.vertex(d).bound);
  ASSERT_TRUE(merged->find("T").has_value());
  EXPECT_EQ(merged->vertex(*merged->find("T")).inputs, std::vector<VertexId>{n.steps.back()});
  EXPECT_FALSE(merged->find("AB").has_value());  // an inner value: the n-ary einsum's now
  EXPECT_EQ(merged->outputs().size(), 1u);
  EXPECT_EQ(merged->vertex(merged->outputs()[0]).name, "T");
  // The labels: each operand's own, joined where the chain joins them.
  const EinSum& e = n.einsum;
  EXPECT_EQ(e.inputs[0][1], e.inputs[1][0]);
  EXPECT_EQ(e.inputs[1][1], e.inputs[2][0]);
  EXPECT_EQ(e.output, (std::string{e.inputs[0][0], e.inputs[2][1]}));
}

TEST(ContractionChains, ValuesReadElsewhereOrOtherOpsStayAsWritten) {
  auto chain = [](bool output_inner, bool read_twice, bool relu) {
    Graph g;
    const VertexId a = g.input("A", Dtype::f64, {64, 32});
    const VertexId b = g.input("B", Dtype::f64, {32, 64});
    const VertexId c = g.input("C", Dtype::f64, {64, 16});
    EinsumOptions first = named("AB");
    if (relu) first.map = MapOp::relu();
    const VertexId ab = g.einsum("ij,jk->ik", a, b, first);
    const VertexId d = g.einsum("ik,kl->il", ab, c, named("D"));
    g.output(d);
    if (output_inner) g.output(ab);
    if (read_twice) g.output(g.einsum("ik->k", ab, named("S")));
    return merge_contraction_chains(g);
  };
  EXPECT_TRUE(chain(false, false, false).has_value());
  EXPECT_FALSE(chain(true, false, false).has_value());  // an output
  EXPECT_FALSE(chain(false, true, false).has_value());  // read by another vertex too
  EXPECT_FALSE(chain(false, false, true).has_value());  // a map: not a contraction
}

TEST(ContractionChains, AChainWhoseEveryOrderIsTheWrittenOneStaysAsWritten) {
  // (X·Y)·Z is the order of fewest flops, of least memory and of their combination: planning the merged graph
  // would repeat the written one's plan (issue 64: transformer layers planned twice as long), so nothing merges.
  auto chain = [](Extent z) {
    Graph g;
    const VertexId x = g.input("X", Dtype::f64, {8, 1000});
    const VertexId y = g.input("Y", Dtype::f64, {1000, 8});
    const VertexId zz = g.input("Z", Dtype::f64, {8, z});
    g.output(g.einsum("ik,kl->il", g.einsum("ij,jk->ik", x, y, named("XY")), zz, named("D")));
    return merge_contraction_chains(g);
  };
  EXPECT_FALSE(chain(8).has_value());
  EXPECT_TRUE(chain(2).has_value());  // X·(Y·Z) moves fewer flops with a thin Z: an order to weigh
}

TEST(ContractionChains, WithoutAMemoryLimitOnlyChainsWithCheaperOrdersMerge) {
  // Attention's value projection, weighting and output projection (a transformer layer): written in its
  // least-flops order, but another candidate order differs, so every_order merges it and cheaper_by_flops does not.
  Graph g;
  const VertexId x = g.input("X", Dtype::f64, {4096, 4096});
  const VertexId p = g.input("P", Dtype::f64, {32, 4096, 4096});
  const VertexId wv = g.input("WV", Dtype::f64, {4096, 32, 128});
  const VertexId wo = g.input("WO", Dtype::f64, {4096, 32, 128});
  const VertexId v = g.einsum("sa,ahd->shd", x, wv, named("V"));
  const VertexId o = g.einsum("hst,thd->shd", p, v, named("O"));
  g.output(g.einsum("shd,ahd->sa", o, wo, named("Y")));
  EXPECT_TRUE(merge_contraction_chains(g, ChainMerge::every_order).has_value());
  EXPECT_FALSE(merge_contraction_chains(g, ChainMerge::cheaper_by_flops).has_value());
  // A chain with an order of fewer flops merges either way.
  Graph c;
  const VertexId a = c.input("A", Dtype::f64, {2048, 16});
  const VertexId ab = c.einsum("ij,jk->ik", a, c.input("B", Dtype::f64, {16, 2048}), named("AB"));
  c.output(c.einsum("ik,kl->il", ab, c.input("C", Dtype::f64, {2048, 8}), named("D")));
  EXPECT_TRUE(merge_contraction_chains(c, ChainMerge::cheaper_by_flops).has_value());
}

TEST(ContractionChains, TreesAndNaryEinsumsAreKept) {
  Graph g;
  const VertexId a = g.input("A", Dtype::f64, {8, 9});
  const VertexId b = g.input("B", Dtype::f64, {9, 10});
  const VertexId c = g.input("C", Dtype::f64, {10, 11});
  const VertexId d = g.input("D", Dtype::f64, {11, 12});
  const VertexId x = g.input("X", Dtype::f64, {12});
  const VertexId ab = g.einsum("ij,jk->ik", a, b, named("AB"));
  const VertexId cd = g.einsum("kl,lm->km", c, d, named("CD"));
  const VertexId t = g.einsum("ik,km->im", ab, cd, named("T"));      // a tree of two inner values: 4 leaves
  const VertexId n = g.einsum("im,m,im->i", {t, x, t}, named("N"));  // an n-ary einsum of the graph
  g.output(n);
  const std::optional<Graph> merged = merge_contraction_chains(g);
  ASSERT_TRUE(merged.has_value());
  ASSERT_EQ(merged->nary_einsums().size(), 2u);
  EXPECT_EQ(merged->nary_einsums()[0].einsum.arity(), 4u);
  EXPECT_EQ(merged->vertex(merged->nary_einsums()[0].steps.back()).name, "T");
  EXPECT_EQ(merged->nary_einsums()[1].equation, g.nary_einsums()[0].equation);
  EXPECT_EQ(merged->vertex(merged->nary_einsums()[1].steps.back()).name, "N");
  EXPECT_EQ(merged->size(), g.size());  // as many binary vertices either way
  // A chain of more operands than the order search takes stays as written.
  Graph long_chain;
  VertexId v = long_chain.input("M0", Dtype::f64, {4, 4});
  for (int k = 1; k <= 14; ++k)
    v = long_chain.einsum("ij,jk->ik", v, long_chain.input("M" + std::to_string(k), Dtype::f64, {4, 4}),
                          named("P" + std::to_string(k)));
  long_chain.output(v);
  EXPECT_FALSE(merge_contraction_chains(long_chain).has_value());
}

}  // namespace
