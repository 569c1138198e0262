// Block shapes of block-sparse relations (docs/sparse.md): a shape seen on another grid, which vertices skip
// absent blocks (sparse_rule), binding shapes to sparse inputs, and the graph file's `sparse` inputs.
#include <einrel_BlockShape.hpp>
#include <einrel_GraphFile.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace einrel;

TEST(BlockShape, OnAnotherGridABlockIsPresentWhenItOverlapsAPresentOne) {
  // 8×6 cut 4×3 (blocks 2×2); blocks (0,0) and (3,2) present.
  const BlockGrid fine({8, 6}, {4, 3});
  std::vector<bool> present(12, false);
  present[0] = present[11] = true;
  const BlockShape shape(fine, present);
  EXPECT_EQ(shape.num_present(), 2);
  EXPECT_DOUBLE_EQ(shape.density(), 8.0 / 48.0);
  const BlockShape coarse = shape.on(BlockGrid({8, 6}, {2, 1}));
  EXPECT_EQ(coarse.mask(), (std::vector<bool>{true, true}));
  // A grid whose cuts fall inside the blocks: (0..3)×(0..2) overlaps block (0,0) and (1,0) of the fine grid.
  const BlockShape odd = shape.on(BlockGrid::from_cuts({8, 6}, {{0, 3, 5}, {0, 2}}));
  EXPECT_EQ(odd.mask(), (std::vector<bool>{true, false, false, false, false, true}));
  EXPECT_EQ(shape.on(fine), shape);
  EXPECT_THROW(shape.on(BlockGrid({8, 7}, {1, 1})), Error);
  EXPECT_THROW(BlockShape(fine, std::vector<bool>(11)), Error);
}

TEST(BlockShape, ZeroPreservingVerticesKeepAbsentBlocks) {
  auto rule = [](const char* equation, std::size_t n, JoinOp join, AggOp agg, MapOp map) {
    EinSum e = EinSum::parse(equation, n);
    e.join = join, e.agg = agg, e.map = map;
    return sparse_rule(e);
  };
  const SparseRule both = SparseRule::intersection, either = SparseRule::union_of_shapes, dense = SparseRule::dense;
  EXPECT_EQ(rule("ij,jk->ik", 2, JoinOp::mul, AggOp::sum, {}), both);
  EXPECT_EQ(rule("ij,jk->ik", 2, JoinOp::mul, AggOp::sum, {MapKind::relu, 0}), both);
  EXPECT_EQ(rule("ij->ji", 1, JoinOp::mul, AggOp::max, {MapKind::scale, 3}), both);  // nothing aggregated
  EXPECT_EQ(rule("ij->i", 1, JoinOp::mul, AggOp::sum, {MapKind::square, 0}), both);
  EXPECT_EQ(rule("ij->ij", 1, JoinOp::add, AggOp::sum, {}), both);                 // a unary EinSum has no join
  EXPECT_EQ(rule("ij,jk->ik", 2, JoinOp::mul, AggOp::max, {}), dense);             // max over zeros is not nothing
  EXPECT_EQ(rule("ij->i", 1, JoinOp::mul, AggOp::sum, {MapKind::exp, 0}), dense);  // exp(0) = 1
  EXPECT_EQ(rule("ij->ij", 1, JoinOp::mul, AggOp::sum, {MapKind::shift, 1}), dense);
  EXPECT_EQ(rule("ij->ij", 1, JoinOp::mul, AggOp::sum, {MapKind::pow, 0}), dense);
  EXPECT_EQ(rule("ij->ij", 1, JoinOp::mul, AggOp::sum, {MapKind::pow, 2}), both);
  // The join of two zeros is zero: the union.
  for (JoinOp join : {JoinOp::add, JoinOp::sub, JoinOp::max, JoinOp::min, JoinOp::sqdiff, JoinOp::absdiff})
    EXPECT_EQ(rule("ij,ij->ij", 2, join, AggOp::sum, {MapKind::scale, 2}), either) << op_name(join);
  EXPECT_EQ(rule("ij,ij->", 2, JoinOp::sqdiff, AggOp::sum, {}), either);
  EXPECT_EQ(rule("ij,ij->i", 2, JoinOp::add, AggOp::max, {}), dense);  // max over zeros
  EXPECT_EQ(rule("ij,ij->ij", 2, JoinOp::add, AggOp::sum, {MapKind::exp, 0}), dense);
  EXPECT_EQ(rule("ij,ij->ij", 2, JoinOp::div, AggOp::sum, {}), dense);  // 0 / 0
  EXPECT_EQ(rule("ij,ij->ij", 2, JoinOp::eq, AggOp::sum, {}), dense);   // (0 == 0) = 1
}

TEST(BlockShape, SparseInputsAreDeclaredInGraphFilesAndTakeTheirShapeBeforePlanning) {
  Graph g =
      parse_graph("input A f64[8,6] sparse\ninput B f64[6,4]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n", "s.ein");
  const VertexId A = g.find("A").value(), B = g.find("B").value();
  EXPECT_TRUE(g.vertex(A).sparse);
  EXPECT_FALSE(g.vertex(B).sparse);
  EXPECT_EQ(print_graph(g).substr(0, 26), "input A f64[8,6] sparse\nin");
  const BlockShape shape(BlockGrid({8, 6}, {2, 2}), {true, false, false, true});
  g.bind_shape(A, shape);
  EXPECT_EQ(*g.vertex(A).shape, shape);
  EXPECT_THROW(g.bind_shape(B, BlockShape(BlockGrid({6, 4}, {1, 1}), {true})), Error);  // not sparse
  EXPECT_THROW(g.bind_shape(A, BlockShape(BlockGrid({8, 7}, {1, 1}), {true})), Error);  // another bound
  try {
    parse_graph("input A f64[8,6] spares\n", "t.ein");
    FAIL() << "a misspelt keyword parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.ein:1:18"), std::string::npos) << e.what();
  }
}

// Norm bounds (docs/sparse.md "Screening by norms"): on another grid, a block's bound is the root of the sum of
// the squared bounds of the blocks it overlaps, whatever part of them it covers.
TEST(BlockShape, NormBoundsFollowTheGrid) {
  const BlockShape shape(BlockGrid({8, 6}, {2, 2}), {true, false, true, true}, {3, 0, 4, 12});
  EXPECT_TRUE(shape.has_norms());
  EXPECT_EQ(shape.norm(2), 4);
  const BlockShape coarse = shape.on(BlockGrid({8, 6}, {1, 2}));
  EXPECT_EQ(coarse.mask(), (std::vector<bool>{true, true}));
  EXPECT_DOUBLE_EQ(coarse.norm(0), 5);   // blocks 0 and 2: sqrt(9 + 16)
  EXPECT_DOUBLE_EQ(coarse.norm(1), 12);  // blocks 1 and 3: sqrt(0 + 144)
  const BlockShape fine = shape.on(BlockGrid({8, 6}, {4, 1}));
  EXPECT_DOUBLE_EQ(fine.norm(0), 3);  // rows 0-1: blocks 0 and 1
  EXPECT_DOUBLE_EQ(fine.norm(3), std::sqrt(16.0 + 144.0));
  EXPECT_FALSE(
      BlockShape(BlockGrid({8, 6}, {2, 2}), {true, false, true, true}).on(BlockGrid({8, 6}, {1, 1})).has_norms());
  EXPECT_FALSE(shape == BlockShape(BlockGrid({8, 6}, {2, 2}), {true, false, true, true}));
  EXPECT_THROW(BlockShape(BlockGrid({8, 6}, {2, 2}), {true, false, true, true}, {1, 2, 3}), Error);
  EXPECT_THROW(BlockShape(BlockGrid({8, 6}, {2, 2}), {true, false, true, true}, {1, -2, 3, 4}), Error);
}

}  // namespace
