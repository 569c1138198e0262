#include <einrel_EinSum.hpp>
#include <einrel_OpSemantics.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace einrel;

TEST(EinSum, ExplicitBinary) {
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  EXPECT_EQ(e.inputs, (std::vector<std::string>{"ij", "jk"}));
  EXPECT_EQ(e.output, "ik");
  EXPECT_EQ(e.unique_labels(), "ijk");
  EXPECT_EQ(e.aggregated_labels(), "j");
  EXPECT_EQ(e.equation(), "ij,jk->ik");
}

TEST(EinSum, SpacesAreIgnored) { EXPECT_EQ(EinSum::parse(" ij , jk -> ki ", 2).equation(), "ij,jk->ki"); }

TEST(EinSum, ImplicitOutputIsLabelsSeenOnceInAsciiOrder) {
  EXPECT_EQ(EinSum::parse("ij,jk", 2).output, "ik");
  EXPECT_EQ(EinSum::parse("ba", 1).output, "ab");
  EXPECT_EQ(EinSum::parse("bA,Ac", 2).output, "bc");
  EXPECT_EQ(EinSum::parse("aB,c", 2).output, "Bac");  // uppercase sorts first, as in numpy
  EXPECT_EQ(EinSum::parse("ij,ij", 2).output, "");
}

TEST(EinSum, ZeroDimensionalResultsAndOperands) {
  const EinSum full = EinSum::parse("ij,ij->", 2);
  EXPECT_EQ(full.output, "");
  EXPECT_EQ(full.aggregated_labels(), "ij");
  const EinSum scalar_operand = EinSum::parse(",ij->ij", 2);
  EXPECT_EQ(scalar_operand.inputs[0], "");
}

TEST(EinSum, UnaryTransposeAndReduction) {
  EXPECT_EQ(EinSum::parse("ijk->kji", 1).aggregated_labels(), "");
  EXPECT_EQ(EinSum::parse("ijk->j", 1).aggregated_labels(), "ik");
}

std::size_t error_position(const std::string& eq, std::size_t operands, const std::string& expected_text) {
  try {
    EinSum::parse(eq, operands);
  } catch (const EquationError& e) {
    EXPECT_NE(std::string(e.what()).find(expected_text), std::string::npos) << e.what();
    return e.position();
  }
  ADD_FAILURE() << "'" << eq << "' parsed";
  return 0;
}

TEST(EinSum, ErrorsNameTheProblemAndPosition) {
  EXPECT_EQ(error_position("iij->j", 1, "(diagonals) are not supported"), 1u);
  EXPECT_EQ(error_position("...i->i", 1, "ellipsis"), 0u);
  EXPECT_EQ(error_position("i1->i", 1, "invalid character '1'"), 1u);
  EXPECT_EQ(error_position("ij,jk->iz", 2, "output label 'z'"), 8u);
  EXPECT_EQ(error_position("ij,jk->ik", 1, "2 operand(s) but 1"), 0u);
  EXPECT_EQ(error_position("ij->i>", 1, "invalid character '>' in the output"), 5u);
  EXPECT_EQ(error_position("ij->i,j", 1, "unexpected ','"), 5u);
  EXPECT_EQ(error_position("", 0, "at least one operand"), 0u);
}

TEST(EinSum, ParsesNaryEquations) {
  const EinSum e = EinSum::parse("ij,jk,kl,lm", 4);
  EXPECT_EQ(e.inputs, (std::vector<std::string>{"ij", "jk", "kl", "lm"}));
  EXPECT_EQ(e.output, "im");
  EXPECT_EQ(e.aggregated_labels(), "jkl");
}

TEST(EinSum, OpsHaveNamesThatParseBack) {
  for (JoinOp op : {JoinOp::mul, JoinOp::add, JoinOp::sub, JoinOp::div, JoinOp::max, JoinOp::min, JoinOp::sqdiff,
                    JoinOp::absdiff, JoinOp::eq, JoinOp::first})
    EXPECT_EQ(parse_join_op(op_name(op)), op);
  EXPECT_EQ(parse_map_kind("sign"), MapKind::sign);
  for (AggOp op : {AggOp::sum, AggOp::max, AggOp::min, AggOp::prod}) EXPECT_EQ(parse_agg_op(op_name(op)), op);
  EXPECT_EQ(parse_map_kind("sigmoid"), MapKind::sigmoid);
  EXPECT_FALSE(parse_join_op("sqrt"));
  EXPECT_EQ(map_spelling({MapKind::scale, 0.1}), "scale(0.1)");
  EXPECT_EQ(map_spelling({MapKind::pow, -2}), "pow(-2)");
  EXPECT_EQ(map_spelling({MapKind::exp, 0}), "exp");
  EXPECT_EQ(std::stod("0.1"), 0.1);  // the shortest spelling reads back exactly
}

TEST(EinSum, ScalarSemanticsOfOps) {
  EXPECT_EQ(apply_join(JoinOp::sqdiff, 1.0, 4.0), 9.0);
  EXPECT_EQ(apply_join(JoinOp::absdiff, 1.0, 4.0), 3.0);
  EXPECT_EQ(apply_join(JoinOp::div, 1.0, 4.0), 0.25);
  EXPECT_EQ(apply_agg(AggOp::prod, 3.0, 4.0), 12.0);
  EXPECT_EQ(apply_agg(AggOp::min, 3.0, -4.0), -4.0);
  EXPECT_EQ(apply_map(MapOp{MapKind::relu, 0}, -2.0), 0.0);
  EXPECT_EQ(apply_map(MapOp{MapKind::shift, 0.5}, 2.0), 2.5);
  EXPECT_DOUBLE_EQ(apply_map(MapOp{MapKind::pow, 3}, 2.0), 8.0);
  EXPECT_DOUBLE_EQ(apply_map(MapOp{MapKind::sigmoid, 0}, 0.0), 0.5);
  EXPECT_FLOAT_EQ(apply_map(MapOp{MapKind::scale, 0.125}, 8.0f), 1.0f);
  EXPECT_EQ(apply_join(JoinOp::eq, 2.0, 2.0), 1.0);
  EXPECT_EQ(apply_join(JoinOp::eq, 2.0, -2.0), 0.0);
  EXPECT_EQ(apply_join(JoinOp::eq, std::nan(""), std::nan("")), 0.0);  // NaN equals nothing
  EXPECT_EQ(apply_join(JoinOp::first, 2.0, std::nan("")), 2.0);
  EXPECT_EQ(apply_map(MapOp{MapKind::sign, 0}, -0.5), -1.0);
  EXPECT_EQ(apply_map(MapOp{MapKind::sign, 0}, 0.0), 0.0);
  EXPECT_EQ(apply_map(MapOp{MapKind::sign, 0}, 3.0f), 1.0f);
  EXPECT_TRUE(std::isnan(apply_map(MapOp{MapKind::sign, 0}, std::nan(""))));
  EXPECT_EQ(apply_map(MapOp{MapKind::pow, 0}, std::nan("")), 1.0);  // the gradient's seed
}

}  // namespace

// The builder API's short spellings name every map, with its constant where it takes one, and print as the
// graph language spells them.
TEST(EinSum, ShortMapSpellings) {
  const std::pair<MapOp, std::string> cases[] = {
      {MapOp::identity(), "identity"}, {MapOp::exp(), "exp"},    {MapOp::log(), "log"},
      {MapOp::neg(), "neg"},           {MapOp::abs(), "abs"},    {MapOp::relu(), "relu"},
      {MapOp::square(), "square"},     {MapOp::sqrt(), "sqrt"},  {MapOp::tanh(), "tanh"},
      {MapOp::sigmoid(), "sigmoid"},   {MapOp::sign(), "sign"},  {MapOp::scale(0.125), "scale(0.125)"},
      {MapOp::shift(-2), "shift(-2)"}, {MapOp::pow(3), "pow(3)"}};
  for (const auto& [map, spelling] : cases) {
    EXPECT_EQ(map_spelling(map), spelling);
    const auto kind = parse_map_kind(spelling.substr(0, spelling.find('(')));
    ASSERT_TRUE(kind.has_value()) << spelling;
    EXPECT_EQ(map.kind, *kind);
  }
  EXPECT_EQ(MapOp::abs(), (MapOp{MapKind::abs, 0.0}));
  EXPECT_DOUBLE_EQ(apply_map(MapOp::scale(0.5), 8.0), 4.0);
}
