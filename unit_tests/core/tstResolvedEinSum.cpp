// ResolvedEinSum: an EinSum's labels resolved against its operands' bounds, the one place label extents
// and positions are derived (the graph keeps one per vertex, the kernels build one per block).
#include <einrel_Bound.hpp>
#include <einrel_Graph.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace einrel;
using Positions = std::vector<std::size_t>;
constexpr std::size_t absent = ResolvedEinSum::absent;

// The message of the OperandError that `f` throws, with its operand position.
template <class F>
std::pair<std::size_t, std::string> operand_error(F&& f) {
  try {
    f();
  } catch (const OperandError& e) {
    return {e.position(), e.what()};
  }
  ADD_FAILURE() << "no OperandError";
  return {absent, ""};
}

TEST(ResolvedEinSum, Matmul) {
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  const ResolvedEinSum r = resolve(e, {{2, 3}, {3, 4}});
  EXPECT_EQ(r.einsum(), e);
  EXPECT_EQ(r.arity(), 2u);
  EXPECT_EQ(r.unique_labels(), "ijk");
  EXPECT_EQ(r.aggregated_labels(), "j");
  EXPECT_EQ(r.extent('i'), 2);
  EXPECT_EQ(r.extent('j'), 3);
  EXPECT_EQ(r.extent('k'), 4);
  EXPECT_EQ(r.extents("kji"), (Bound{4, 3, 2}));
  EXPECT_EQ(r.extents(""), Bound{});
  EXPECT_EQ(r.output_bound(), (Bound{2, 4}));
  EXPECT_EQ(r.operand_bounds(), (std::vector<Bound>{{2, 3}, {3, 4}}));
  EXPECT_EQ(r.positions("ijk"), (Positions{0, 1, 2}));
  EXPECT_EQ(r.positions("ki"), (Positions{2, 0}));
  EXPECT_EQ(r.position_in(0, 'i'), 0u);
  EXPECT_EQ(r.position_in(0, 'j'), 1u);
  EXPECT_EQ(r.position_in(0, 'k'), absent);
  EXPECT_EQ(r.position_in(1, 'j'), 0u);
  EXPECT_EQ(r.position_in(1, 'k'), 1u);
  EXPECT_EQ(r.position_in(1, 'i'), absent);
  EXPECT_EQ(r.position_in_output('k'), 1u);
  EXPECT_EQ(r.position_in_output('j'), absent);
  EXPECT_TRUE(r.has('j'));
  EXPECT_FALSE(r.has('z'));
  EXPECT_THROW(r.extent('z'), Error);
  EXPECT_THROW(r.positions("iz"), Error);
  EXPECT_THROW(r.position_in(2, 'i'), std::out_of_range);
}

TEST(ResolvedEinSum, BatchedWithTransposedOutput) {
  const ResolvedEinSum r = resolve(EinSum::parse("bij,bkj->kbi", 2), {{5, 2, 3}, {5, 4, 3}});
  EXPECT_EQ(r.unique_labels(), "bijk");
  EXPECT_EQ(r.aggregated_labels(), "j");
  EXPECT_EQ(r.output_bound(), (Bound{4, 5, 2}));
  EXPECT_EQ(r.positions(r.einsum().output), (Positions{3, 0, 1}));
  EXPECT_EQ(r.positions(r.einsum().inputs[1]), (Positions{0, 3, 2}));
  EXPECT_EQ(r.position_in(1, 'j'), 2u);
  EXPECT_EQ(r.position_in_output('b'), 1u);
}

TEST(ResolvedEinSum, Unary) {
  const ResolvedEinSum r = resolve(EinSum::parse("ijk->ki", 1), {{2, 3, 4}});
  EXPECT_EQ(r.arity(), 1u);
  EXPECT_EQ(r.unique_labels(), "ijk");
  EXPECT_EQ(r.aggregated_labels(), "j");
  EXPECT_EQ(r.output_bound(), (Bound{4, 2}));
  EXPECT_EQ(r.position_in(0, 'k'), 2u);
  EXPECT_EQ(r.position_in_output('i'), 1u);
}

TEST(ResolvedEinSum, ZeroDimensionalOutputAndOperands) {
  const ResolvedEinSum sum = resolve(EinSum::parse("ij->", 1), {{2, 3}});
  EXPECT_EQ(sum.output_bound(), Bound{});
  EXPECT_EQ(sum.aggregated_labels(), "ij");
  const ResolvedEinSum dot = resolve(EinSum::parse("i,i->", 2), {{7}, {7}});
  EXPECT_EQ(dot.output_bound(), Bound{});
  EXPECT_EQ(dot.unique_labels(), "i");
  EXPECT_EQ(dot.extent('i'), 7);
  const ResolvedEinSum scaled = resolve(EinSum::parse("i,->i", 2), {{7}, {}});
  EXPECT_EQ(scaled.output_bound(), Bound{7});
  EXPECT_EQ(scaled.aggregated_labels(), "");
  const ResolvedEinSum scalar = resolve(EinSum::parse("->", 1), {{}});
  EXPECT_EQ(scalar.unique_labels(), "");
  EXPECT_EQ(scalar.output_bound(), Bound{});
}

TEST(ResolvedEinSum, ResolvesAgainstBlockBounds) {
  // A block of a partitioned vertex: the same EinSum, other extents (uneven blocks included).
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  const ResolvedEinSum block = resolve(e, {{3, 2}, {2, 5}});
  EXPECT_EQ(block.output_bound(), (Bound{3, 5}));
  EXPECT_EQ(block.extent('j'), 2);
}

TEST(ResolvedEinSum, RankAndExtentMismatchesNameTheOperand) {
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  auto [at, what] = operand_error([&] { resolve(e, {{2, 3}, {3, 4, 5}}, {"A", "B"}); });
  EXPECT_EQ(at, 1u);
  EXPECT_EQ(what, "'B' has rank 3 [3,4,5] but the equation gives it 2 label(s) 'jk'");
  std::tie(at, what) = operand_error([&] { resolve(e, {{2, 3}, {4, 5}}, {"A", "B"}); });
  EXPECT_EQ(at, 1u);
  EXPECT_EQ(what, "shape mismatch for label 'j': it is 3 in 'A' but 4 in 'B' (dimension 0)");
  // Without names, operands are numbered from 1.
  std::tie(at, what) = operand_error([&] { resolve(e, {{2}, {3, 4}}); });
  EXPECT_EQ(at, 0u);
  EXPECT_EQ(what, "'operand 1' has rank 1 [2] but the equation gives it 2 label(s) 'ij'");
  EXPECT_THROW(resolve(e, {{2, 3}}), Error);  // one bound for two operands
  EinSum stray = e;
  stray.output = "iz";  // only a hand-built EinSum can do this; parse rejects it
  EXPECT_THROW(resolve(stray, {{2, 3}, {3, 4}}), Error);
}

TEST(ResolvedEinSum, TheGraphKeepsOnePerVertex) {
  Graph g;
  const auto a = g.input("A", Dtype::f64, {2, 3});
  const auto b = g.input("B", Dtype::f64, {3, 4});
  const auto t = g.einsum("ij,jk->ki", a, b);
  EXPECT_EQ(g.resolved(t).output_bound(), g.vertex(t).bound);
  EXPECT_EQ(g.resolved(t).output_bound(), (Bound{4, 2}));
  EXPECT_EQ(g.resolved(t).operand_bounds(), (std::vector<Bound>{{2, 3}, {3, 4}}));
  EXPECT_EQ(&g.resolved(t), &*g.vertex(t).resolved);
  EXPECT_FALSE(g.vertex(a).resolved.has_value());
  EXPECT_THROW(g.resolved(a), Error);
}

TEST(ResolvedEinSum, GraphReportsRankThenDtypeThenExtents) {
  Graph g;
  const auto a = g.input("A", Dtype::f64, {2, 3});
  const auto b = g.input("B", Dtype::f32, {4, 5});
  const auto v = g.input("V", Dtype::f32, {4});
  // Right rank, other dtype and extent: the dtype is reported.
  auto [at, what] = operand_error([&] { g.einsum("ij,jk->ik", a, b); });
  EXPECT_EQ(at, 1u);
  EXPECT_EQ(what, "'B' is f32 but 'A' is f64; operands of one einsum share a dtype");
  // Wrong rank and other dtype: the rank is reported.
  std::tie(at, what) = operand_error([&] { g.einsum("ij,jk->ik", a, v); });
  EXPECT_EQ(at, 1u);
  EXPECT_EQ(what, "'V' has rank 1 [4] but the equation gives it 2 label(s) 'jk'");
  EXPECT_EQ(g.size(), 3u);
}

}  // namespace
