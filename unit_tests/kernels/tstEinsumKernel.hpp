#include <einrel_EinsumKernel.hpp>
#include <einrel_Tensor.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace {

using namespace einrel;

// Runs one EinSum through the kernel on TEST_EXECSPACE and compares it with the loop-nest reference;
// operands are uniform in [lo, hi).
template <class Scalar>
void check_einsum(const EinSum& e, const std::vector<Bound>& bounds, unsigned seed, double lo = -1, double hi = 1) {
  std::map<char, Extent> extent;
  std::vector<std::vector<Scalar>> host;
  std::vector<Tensor<Scalar, TEST_MEMSPACE>> operands;
  for (std::size_t k = 0; k < bounds.size(); ++k) {
    for (std::size_t d = 0; d < bounds[k].size(); ++d) extent[e.inputs[k][d]] = bounds[k][d];
    host.push_back(test::random_values<Scalar>(bounds[k], seed + k, lo, hi));
    operands.push_back(tensor_from_host<TEST_MEMSPACE>("op" + std::to_string(k), bounds[k], host.back()));
  }
  Bound out;
  for (char c : e.output) out.push_back(extent[c]);
  Extent terms = 1;
  for (char c : e.aggregated_labels()) terms *= extent[c];

  Tensor<Scalar, TEST_MEMSPACE> z("z", out);
  std::optional<Tensor<Scalar, TEST_MEMSPACE>> y;
  if (operands.size() > 1) y = operands[1];
  TEST_EXECSPACE exec;
  kernels::einsum(exec, e, operands[0], y, z);
  exec.fence();
  SCOPED_TRACE(e.equation() + " join=" + std::string(op_name(e.join)) + " agg=" + std::string(op_name(e.agg)) +
               " map=" + map_spelling(e.map));
  test::expect_all_close(tensor_to_host(z), test::reference_einsum(e, bounds, host),
                         test::sum_tolerance<Scalar>(terms));
}

template <class Scalar>
void check_einsum(const std::string& equation, const std::vector<Bound>& bounds, unsigned seed) {
  check_einsum<Scalar>(EinSum::parse(equation, bounds.size()), bounds, seed);
}

struct Case {
  const char* equation;
  std::vector<Bound> bounds;
};

// Matmul in every orientation, batch, outer products, reductions, transposes, scalars, size-1 and
// odd extents, more labels than dimensions of either operand.
const std::vector<Case> cases = {
    {"ij,jk->ik", {{7, 5}, {5, 3}}},
    {"ij,kj->ik", {{7, 5}, {3, 5}}},
    {"ji,jk->ki", {{5, 7}, {5, 3}}},
    {"ij,jk", {{1, 9}, {9, 1}}},
    {"bij,bjk->bik", {{3, 4, 5}, {3, 5, 2}}},
    {"bij,bjk->kbi", {{3, 4, 5}, {3, 5, 2}}},
    {"i,j->ij", {{6}, {4}}},
    {"ij,ij->", {{5, 6}, {5, 6}}},
    {"ij,ij->ij", {{5, 6}, {5, 6}}},
    {",ij->ji", {{}, {3, 2}}},
    {"i,->", {{11}, {}}},
    {"abcd,cdef->feba", {{2, 3, 4, 5}, {4, 5, 2, 3}}},
    {"ijk,jil->kl", {{3, 4, 5}, {4, 3, 2}}},
    {"shd,thd->hst", {{5, 2, 3}, {4, 2, 3}}},
    {"bi,oi->bo", {{6, 9}, {4, 9}}},
    {"ij->ji", {{13, 7}}},
    {"ijk->j", {{3, 4, 5}}},
    {"ijk->", {{3, 4, 5}}},
    {"->", {{}}},
    {"abcdefgh->hgfedcba", {{2, 1, 2, 1, 2, 1, 2, 3}}},
};

TEST(TEST_CATEGORY, EinsumMatchesLoopNestF64) {
  unsigned seed = 1;
  for (const Case& c : cases) check_einsum<double>(c.equation, c.bounds, seed++);
}

TEST(TEST_CATEGORY, EinsumMatchesLoopNestF32) {
  unsigned seed = 100;
  for (const Case& c : cases) check_einsum<float>(c.equation, c.bounds, seed++);
}

TEST(TEST_CATEGORY, EinsumLargerMatmulF32) { check_einsum<float>("ij,jk->ik", {{65, 130}, {130, 33}}, 5); }

// Every join op with every agg op, on a contraction-shaped and a batched EinSum. Operands in [0.5, 1.5)
// keep div and prod well conditioned; a second pass over [-1, 1) covers sign-sensitive ops.
template <class Scalar>
void check_all_join_agg_pairs() {
  const std::vector<JoinOp> joins = {JoinOp::mul, JoinOp::add,    JoinOp::sub,     JoinOp::div, JoinOp::max,
                                     JoinOp::min, JoinOp::sqdiff, JoinOp::absdiff, JoinOp::eq,  JoinOp::first};
  const std::vector<AggOp> aggs = {AggOp::sum, AggOp::max, AggOp::min, AggOp::prod};
  unsigned seed = 7;
  for (const Case& c : {Case{"ij,jk->ik", {{5, 4}, {4, 3}}}, Case{"bij,bj->ib", {{2, 3, 5}, {2, 5}}}})
    for (JoinOp join : joins)
      for (AggOp agg : aggs) {
        EinSum e = EinSum::parse(c.equation, 2);
        e.join = join;
        e.agg = agg;
        check_einsum<Scalar>(e, c.bounds, seed++, 0.5, 1.5);
        if (join != JoinOp::div && agg != AggOp::prod) check_einsum<Scalar>(e, c.bounds, seed++);
      }
}

TEST(TEST_CATEGORY, EinsumEveryJoinAndAggF64) { check_all_join_agg_pairs<double>(); }
TEST(TEST_CATEGORY, EinsumEveryJoinAndAggF32) { check_all_join_agg_pairs<float>(); }

// Every map, on a unary reduction and after a binary join. Positive operands keep log, sqrt and pow real.
template <class Scalar>
void check_all_maps() {
  const std::vector<MapOp> maps = {
      {MapKind::identity, 0},   {MapKind::exp, 0},     {MapKind::log, 0},   {MapKind::neg, 0},  {MapKind::abs, 0},
      {MapKind::relu, 0},       {MapKind::square, 0},  {MapKind::sqrt, 0},  {MapKind::tanh, 0}, {MapKind::sigmoid, 0},
      {MapKind::scale, -0.125}, {MapKind::shift, 2.5}, {MapKind::pow, 1.5}, {MapKind::sign, 0}};
  unsigned seed = 300;
  for (const MapOp& f : maps) {
    EinSum unary = EinSum::parse("ijk->ki", 1);
    unary.map = f;
    check_einsum<Scalar>(unary, {{3, 4, 5}}, seed++, 0.25, 1.25);
    EinSum binary = EinSum::parse("ij,j->ij", 2);
    binary.join = JoinOp::add;
    binary.map = f;
    check_einsum<Scalar>(binary, {{4, 6}, {6}}, seed++, 0.25, 1.25);
    if (f.kind != MapKind::log && f.kind != MapKind::sqrt && f.kind != MapKind::pow) {
      unary.agg = AggOp::max;
      check_einsum<Scalar>(unary, {{3, 4, 5}}, seed++);
    }
  }
}

TEST(TEST_CATEGORY, EinsumEveryMapF64) { check_all_maps<double>(); }
TEST(TEST_CATEGORY, EinsumEveryMapF32) { check_all_maps<float>(); }

// Element-wise EinSums take the row kernel: every join, rows longer than one piece of it (2048) with a
// ragged end, operands read across their rows (transposed) or broadcast, maps after the join.
template <class Scalar>
void check_elementwise_joins() {
  const std::vector<JoinOp> joins = {JoinOp::mul, JoinOp::add,    JoinOp::sub,     JoinOp::div, JoinOp::max,
                                     JoinOp::min, JoinOp::sqdiff, JoinOp::absdiff, JoinOp::eq,  JoinOp::first};
  unsigned seed = 500;
  for (const Case& c : {Case{"ij,j->ij", {{3, 4100}, {4100}}}, Case{"ij,ji->ij", {{7, 9}, {9, 7}}},
                        Case{"ij,i->ji", {{5, 2049}, {5}}}, Case{"bij,b->bij", {{2, 3, 4}, {2}}}})
    for (JoinOp join : joins) {
      EinSum e = EinSum::parse(c.equation, 2);
      e.join = join;
      check_einsum<Scalar>(e, c.bounds, seed++, 0.5, 1.5);
      e.map = {MapKind::relu, 0};
      check_einsum<Scalar>(e, c.bounds, seed++);
    }
  EinSum transpose = EinSum::parse("ij->ji", 1);
  transpose.map = {MapKind::scale, 3};
  check_einsum<Scalar>(transpose, {{2100, 3}}, seed++);
}

TEST(TEST_CATEGORY, ElementwiseRowsEveryJoinF64) { check_elementwise_joins<double>(); }
TEST(TEST_CATEGORY, ElementwiseRowsEveryJoinF32) { check_elementwise_joins<float>(); }

// With Z = X (labels in X's order), an element-wise EinSum overwrites its first operand: what the engine
// does when that operand dies at the vertex.
TEST(TEST_CATEGORY, ElementwiseInPlace) {
  const Bound b{6, 2500};
  const std::vector<double> xs = test::random_values<double>(b, 11, -1, 1),
                            bias = test::random_values<double>({2500}, 12, -1, 1);
  TEST_EXECSPACE exec;
  EinSum e = EinSum::parse("ij,j->ij", 2);
  e.join = JoinOp::add;
  e.map = {MapKind::relu, 0};
  const auto x = tensor_from_host<TEST_MEMSPACE>("x", b, xs);
  const auto y = tensor_from_host<TEST_MEMSPACE>("y", {2500}, bias);
  kernels::einsum(exec, e, x, std::optional{y}, x);
  EinSum unary = EinSum::parse("ij->ij", 1);
  unary.map = {MapKind::scale, 0.5};
  kernels::einsum(exec, unary, x, {}, x);
  exec.fence();
  std::vector<double> expected(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) expected[i] = 0.5 * std::max(xs[i] + bias[i % 2500], 0.0);
  test::expect_all_close(tensor_to_host(x), expected, 1e-15);
}

template <class Scalar>
void check_accumulate(AggOp agg) {
  const Bound b{3, 7};
  const auto a = test::random_values<Scalar>(b, 11, 0.5, 1.5), c = test::random_values<Scalar>(b, 12, 0.5, 1.5);
  auto acc = tensor_from_host<TEST_MEMSPACE>("acc", b, a);
  const auto in = tensor_from_host<TEST_MEMSPACE>("in", b, c);
  TEST_EXECSPACE exec;
  kernels::accumulate(exec, agg, acc, in);
  exec.fence();
  std::vector<double> expected(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) expected[i] = test::reference_agg(agg, a[i], c[i]);
  test::expect_all_close(tensor_to_host(acc), expected, test::sum_tolerance<Scalar>(2));
}

TEST(TEST_CATEGORY, AccumulateAppliesAggElementwise) {
  for (AggOp agg : {AggOp::sum, AggOp::max, AggOp::min, AggOp::prod}) {
    check_accumulate<double>(agg);
    check_accumulate<float>(agg);
  }
  Tensor<double, TEST_MEMSPACE> a("a", {2, 3}), b("b", {3, 2});
  EXPECT_THROW(kernels::accumulate(TEST_EXECSPACE{}, AggOp::sum, a, b), Error);
}

TEST(TEST_CATEGORY, EinsumRejectsWrongOutputBound) {
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  Tensor<double, TEST_MEMSPACE> x("x", {2, 3}), y("y", {3, 4}), z("z", {2, 5});
  EXPECT_THROW(kernels::einsum(TEST_EXECSPACE{}, e, x, std::optional(y), z), Error);
  EXPECT_THROW(kernels::einsum(TEST_EXECSPACE{}, e, x, std::optional<decltype(y)>{}, z), Error);
}

}  // namespace
