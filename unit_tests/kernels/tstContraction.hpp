#include <einrel_ContractionPlan.hpp>
#include <einrel_EinsumKernel.hpp>

#include <einrel_TestDeviceQueue.hpp>
#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <random>

namespace {

using namespace einrel;

template <class Scalar>
using T = Tensor<Scalar, TEST_MEMSPACE>;

Bound bound_of(const std::string& labels, const std::map<char, Extent>& extent) {
  Bound b;
  for (char c : labels) b.push_back(extent.at(c));
  return b;
}

// kernels::einsum on random operands in [lo, hi) against the loop-nest reference; with accumulate, Z
// starts random and the expected result is Z0 ⊕ einsum.
template <class Scalar>
void check(const EinSum& e, const std::map<char, Extent>& extent, unsigned seed, bool accumulate = false,
           double lo = -1, double hi = 1) {
  const Bound xb = bound_of(e.inputs[0], extent), yb = bound_of(e.inputs[1], extent), zb = bound_of(e.output, extent);
  const auto x = test::random_values<Scalar>(xb, seed, lo, hi), y = test::random_values<Scalar>(yb, seed + 1, lo, hi),
             z0 = test::random_values<Scalar>(zb, seed + 2, lo, hi);
  const auto z = tensor_from_host<TEST_MEMSPACE>("z", zb, accumulate ? z0 : std::vector<Scalar>(z0.size(), 0));
  TEST_EXECSPACE exec;
  kernels::einsum(exec, e, tensor_from_host<TEST_MEMSPACE>("x", xb, x),
                  std::optional(tensor_from_host<TEST_MEMSPACE>("y", yb, y)), z, accumulate);
  exec.fence();
  auto expected = test::reference_einsum(e, {xb, yb}, std::vector{x, y});
  if (accumulate)
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = test::reference_agg(e.agg, z0[i], expected[i]);
  Extent terms = 1;
  for (char c : e.aggregated_labels()) terms *= extent.at(c);
  SCOPED_TRACE(e.equation() + " " + to_string(xb) + " " + to_string(yb) + (accumulate ? " accumulate" : ""));
  test::expect_all_close(tensor_to_host(z), expected, test::sum_tolerance<Scalar>(terms + 1));
}

// Random contractions: every label group (batch, m, n, k, single-operand) with random sizes, random
// label orders in X, Y and Z, extents from 1 to 37, so that GEMM, batched GEMM, packing, transposes
// and the generic fallback all run.
template <class Scalar>
void check_random_contractions(unsigned seed) {
  std::mt19937 gen(seed);
  const std::vector<Extent> extents = {1, 2, 3, 5, 8, 13, 16, 37};
  for (int trial = 0; trial < 60; ++trial) {
    std::string letters = "abcdefghij";
    std::shuffle(letters.begin(), letters.end(), gen);
    std::size_t next = 0;
    auto group = [&](int max) {  // the next 0..max unused letters
      const std::string g = letters.substr(next, gen() % (max + 1));
      next += g.size();
      return g;
    };
    const std::string batch = group(2), m = group(2), n = group(2), x_only = group(1), y_only = group(1);
    std::string k = group(2);
    if (k.empty()) k = letters.substr(next++, 1);
    std::map<char, Extent> extent;
    Extent work = 1;
    for (char c : batch + m + n + k + x_only + y_only) {
      extent[c] = extents[gen() % extents.size()];
      work *= extent[c];
    }
    if (work > 400000) continue;  // keep the reference loop nest fast
    auto shuffled = [&](std::string s) {
      std::shuffle(s.begin(), s.end(), gen);
      return s;
    };
    const EinSum e = EinSum::parse(
        shuffled(batch + m + k + x_only) + "," + shuffled(batch + k + n + y_only) + "->" + shuffled(batch + m + n), 2);
    check<Scalar>(e, extent, seed + trial, trial % 3 == 0);
  }
}

TEST(TEST_CATEGORY, RandomContractionsF64) { check_random_contractions<double>(21); }
TEST(TEST_CATEGORY, RandomContractionsF32) { check_random_contractions<float>(22); }

// The named shapes of the kernels issue, large enough for the GEMM path, in both dtypes.
TEST(TEST_CATEGORY, GemmShapedContractions) {
  const std::vector<std::pair<const char*, std::map<char, Extent>>> cases = {
      {"ij,jk->ik", {{'i', 67}, {'j', 45}, {'k', 33}}},
      {"ij,kj->ik", {{'i', 67}, {'j', 45}, {'k', 33}}},
      {"ji,jk->ik", {{'i', 67}, {'j', 45}, {'k', 33}}},
      {"ji,kj->ki", {{'i', 67}, {'j', 45}, {'k', 33}}},
      {"ij,jk->ki", {{'i', 1}, {'j', 200}, {'k', 40}}},
      {"bij,bjk->bik", {{'b', 20}, {'i', 6}, {'j', 7}, {'k', 5}}},
      {"bij,bjk->bik", {{'b', 3}, {'i', 50}, {'j', 70}, {'k', 60}}},
      {"abcd,cdef->feba", {{'a', 6}, {'b', 5}, {'c', 4}, {'d', 7}, {'e', 3}, {'f', 9}}},
      {"ijk,jil->kl", {{'i', 9}, {'j', 11}, {'k', 13}, {'l', 7}}},
      {"shd,thd->hst", {{'s', 17}, {'t', 19}, {'h', 3}, {'d', 8}}},
      {"bi,oi->bo", {{'b', 31}, {'i', 64}, {'o', 29}}},
      {"ij,j->i", {{'i', 300}, {'j', 70}}},
  };
  unsigned seed = 50;
  for (const auto& [equation, extent] : cases) {
    const EinSum e = EinSum::parse(equation, 2);
    check<double>(e, extent, seed++);
    check<float>(e, extent, seed++);
    check<double>(e, extent, seed++, true);
  }
}

// Matrix-shaped EinSums with other ops take the blocked generic kernel: every join with every agg, with
// and without a map, in stored orders that need packing (X, Y) and a permuted result (Z).
template <class Scalar>
void check_blocked_generic() {
  const std::map<char, Extent> extent = {{'b', 2}, {'i', 13}, {'j', 17}, {'k', 11}};
  unsigned seed = 600;
  for (JoinOp join : {JoinOp::mul, JoinOp::add, JoinOp::sub, JoinOp::div, JoinOp::max, JoinOp::min, JoinOp::sqdiff,
                      JoinOp::absdiff, JoinOp::eq, JoinOp::first})
    for (AggOp agg : {AggOp::sum, AggOp::max, AggOp::min, AggOp::prod}) {
      EinSum e = EinSum::parse((seed / 2) % 2 ? "bij,bkj->bik" : "jib,kbj->kbi", 2);
      e.join = join;
      e.agg = agg;
      check<Scalar>(e, extent, seed, seed % 3 == 0, 0.5, 1.5);
      e.map = {MapKind::tanh, 0};
      check<Scalar>(e, extent, seed + 1, seed % 3 == 1, 0.5, 1.5);
      seed += 2;
    }
}

TEST(TEST_CATEGORY, BlockedGenericKernelF64) { check_blocked_generic<double>(); }
TEST(TEST_CATEGORY, BlockedGenericKernelF32) { check_blocked_generic<float>(); }

TEST(TEST_CATEGORY, ContractionPlansUseOperandsInPlace) {
  auto plan = [](const char* eq, const Bound& x, const Bound& y) {
    return kernels::plan_contraction(resolve(EinSum::parse(eq, 2), {x, y}));
  };
  auto p = plan("ij,jk->ik", {4, 5}, {5, 6});
  EXPECT_FALSE(p.pack_x || p.pack_y || p.pack_z || p.trans_x || p.trans_y || p.z_transposed);
  EXPECT_EQ(p.m_size * p.n_size * p.k_size, 4 * 6 * 5);
  p = plan("ij,kj->ik", {4, 5}, {6, 5});
  EXPECT_TRUE(p.trans_y && !p.pack_y && !p.pack_x);
  p = plan("ji,jk->ik", {5, 4}, {5, 6});
  EXPECT_TRUE(p.trans_x && !p.pack_x);
  p = plan("ij,jk->ki", {4, 5}, {5, 6});
  EXPECT_TRUE(p.z_transposed && !p.pack_z);
  p = plan("bij,bjk->bik", {3, 4, 5}, {3, 5, 6});
  EXPECT_EQ(p.batch, "b");
  EXPECT_EQ(p.batch_size, 3);
  EXPECT_FALSE(p.pack_x || p.pack_y || p.pack_z);
  // Multi-label groups read in place when their orders agree: m = ab, k = cd, n = ef.
  p = plan("abcd,cdef->abef", {2, 3, 4, 5}, {4, 5, 6, 7});
  EXPECT_FALSE(p.pack_x || p.pack_y || p.pack_z);
  EXPECT_EQ(p.k, "cd");
  // feba reverses m and n: packing Z alone (2*3*6*7 elements) beats packing both operands.
  p = plan("abcd,cdef->feba", {2, 3, 4, 5}, {4, 5, 6, 7});
  EXPECT_TRUE(p.pack_z && !p.pack_x && !p.pack_y);
  // Labels in one operand only are summed before the GEMM.
  p = plan("ijx,jk->ik", {4, 5, 3}, {5, 6});
  EXPECT_EQ(p.x_only, "x");
  EXPECT_EQ(p.x_labels, "ij");
  EXPECT_THROW(kernels::plan_contraction(resolve(EinSum::parse("ij->i", 1), {{2, 2}})), Error);
}

// With strided batches (a device's vendor GEMM) an operand whose batch group lies between its two matrix
// groups is read in place, with its leading dimension and batch stride; without them it is packed.
TEST(TEST_CATEGORY, StridedBatchesReadOperandsInPlace) {
  const ResolvedEinSum attention = resolve(EinSum::parse("shd,thd->hst", 2), {{5, 3, 4}, {6, 3, 4}});
  const kernels::ContractionPlan packed = kernels::plan_contraction(attention);
  EXPECT_TRUE(packed.pack_x && packed.pack_y && !packed.pack_z);
  EXPECT_EQ(packed.x_ld, 4);  // X_h packed as [s][d]
  EXPECT_EQ(packed.x_batch_stride, 5 * 4);
  const kernels::ContractionPlan p = kernels::plan_contraction(attention, true);
  EXPECT_FALSE(p.pack_x || p.pack_y || p.pack_z);
  EXPECT_EQ(p.batch, "h");
  EXPECT_EQ(p.x_gemm, "shd");
  EXPECT_EQ(p.x_ld, 3 * 4);  // X_h = [s][d] rows of [s][h][d]
  EXPECT_EQ(p.x_batch_stride, 4);
  EXPECT_TRUE(p.trans_y);  // Y_h read as [t][d]
  EXPECT_EQ(p.y_ld, 3 * 4);
  EXPECT_EQ(p.y_batch_stride, 4);
  EXPECT_EQ(p.z_ld, 6);
  EXPECT_EQ(p.z_batch_stride, 5 * 6);
  // Z with its batch in the middle, X transposed: [k][b][i], Z [i][b][j].
  const kernels::ContractionPlan z =
      kernels::plan_contraction(resolve(EinSum::parse("kbi,bkj->ibj", 2), {{7, 2, 3}, {2, 7, 5}}), true);
  EXPECT_FALSE(z.pack_x || z.pack_y || z.pack_z);
  EXPECT_TRUE(z.trans_x && !z.z_transposed);
  EXPECT_EQ(z.x_ld, 2 * 3);
  EXPECT_EQ(z.x_batch_stride, 3);
  EXPECT_EQ(z.z_ld, 2 * 5);
  EXPECT_EQ(z.z_batch_stride, 5);
  // A batch group innermost is no GEMM form: packed either way.
  EXPECT_TRUE(
      kernels::plan_contraction(resolve(EinSum::parse("ikb,kjb->ijb", 2), {{3, 7, 2}, {7, 5, 2}}), true).pack_x);
  // The results on this backend (its own plans: strided ones where its GEMM takes them), with accumulate.
  unsigned seed = 300;
  for (const auto& [eq, extent] : std::vector<std::pair<const char*, std::map<char, Extent>>>{
           {"shd,thd->hst", {{'s', 33}, {'h', 3}, {'d', 17}, {'t', 20}}},
           {"kbi,bkj->ibj", {{'k', 19}, {'b', 4}, {'i', 23}, {'j', 9}}},
           {"ibk,jbk->jbi", {{'i', 21}, {'b', 5}, {'k', 16}, {'j', 30}}},
           {"iabk,kabj->iabj", {{'i', 12}, {'a', 2}, {'b', 3}, {'k', 17}, {'j', 11}}}})
    for (const bool accumulate : {false, true}) {
      check<double>(EinSum::parse(eq, 2), extent, seed++, accumulate);
      check<float>(EinSum::parse(eq, 2), extent, seed++, accumulate);
    }
}

// Few outputs with long aggregations take the chunked path; every agg op and a map.
template <class Scalar>
void check_long_reductions() {
  unsigned seed = 80;
  for (AggOp agg : {AggOp::sum, AggOp::max, AggOp::min, AggOp::prod})
    for (const auto& [eq, bound] : std::vector<std::pair<const char*, Bound>>{
             {"ij->", {64, 70}}, {"ijk->j", {40, 3, 50}}, {"ijk->k", {33, 31, 1}}}) {
      EinSum e = EinSum::parse(eq, 1);
      e.agg = agg;
      e.map = {MapKind::shift, agg == AggOp::prod ? 1.0 : 0.0};  // prod of values near 1 stays finite
      const double lo = agg == AggOp::prod ? -0.001 : -1, hi = agg == AggOp::prod ? 0.001 : 1;
      const auto x = test::random_values<Scalar>(bound, seed++, lo, hi);
      Bound zb;
      for (char c : e.output) zb.push_back(bound[e.inputs[0].find(c)]);
      const T<Scalar> z("z", zb);
      TEST_EXECSPACE exec;
      kernels::einsum(exec, e, tensor_from_host<TEST_MEMSPACE>("x", bound, x), std::optional<T<Scalar>>{}, z);
      exec.fence();
      SCOPED_TRACE(std::string(eq) + " agg=" + std::string(op_name(agg)));
      test::expect_all_close(tensor_to_host(z), test::reference_einsum(e, {bound}, std::vector<std::vector<Scalar>>{x}),
                             test::sum_tolerance<Scalar>(num_elements(bound)));
    }
}

TEST(TEST_CATEGORY, LongReductionsF64) { check_long_reductions<double>(); }
TEST(TEST_CATEGORY, LongReductionsF32) { check_long_reductions<float>(); }

// Regression: wrapping a device view in a Tensor read the view's label from device memory (Kokkos 3.4
// keeps it there), a blocking cudaMemcpy, so every packing contraction on a GPU waited for all the kernels
// queued before it and the host's work no longer overlapped the device's. Issued behind a long kernel,
// contractions that pack an operand and the result must return while that kernel still runs.
TEST(TEST_CATEGORY, PackingContractionsDoNotWaitForTheDevice) {
  struct Case {
    const char* equation;
    std::map<char, Extent> extent;
  };
  const std::vector<Case> cases{{"ijk,jil->kl", {{'i', 8}, {'j', 6}, {'k', 40}, {'l', 36}}},
                                {"abcd,cdef->feba", {{'a', 5}, {'b', 6}, {'c', 7}, {'d', 4}, {'e', 9}, {'f', 3}}}};
  std::vector<std::vector<double>> xs, ys;
  std::vector<T<double>> x, y, z;
  unsigned seed = 90;
  for (const Case& c : cases) {
    const EinSum e = EinSum::parse(c.equation, 2);
    const Bound xb = bound_of(e.inputs[0], c.extent), yb = bound_of(e.inputs[1], c.extent);
    xs.push_back(test::random_values<double>(xb, seed++));
    ys.push_back(test::random_values<double>(yb, seed++));
    x.push_back(tensor_from_host<TEST_MEMSPACE>("x", xb, xs.back()));
    y.push_back(tensor_from_host<TEST_MEMSPACE>("y", yb, ys.back()));
    z.push_back(T<double>("z", bound_of(e.output, c.extent)));
  }
  TEST_EXECSPACE exec;
  auto issue = [&] {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const T<double> wrapped(z[i].bound(), z[i].view());  // as the engine wraps its blocks
      kernels::einsum(exec, EinSum::parse(cases[i].equation, 2), x[i], std::optional(y[i]), wrapped);
    }
  };
  issue();  // the first calls take the pool's buffers and the vendor library's handle
  exec.fence();
  test::keep_busy(exec);
  issue();
  if (const auto busy = test::still_busy(exec)) {
    EXPECT_TRUE(*busy) << "a contraction waited for the device";
  }
  exec.fence();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const EinSum e = EinSum::parse(cases[i].equation, 2);
    SCOPED_TRACE(cases[i].equation);
    test::expect_all_close(tensor_to_host(z[i]),
                           test::reference_einsum(e, {x[i].bound(), y[i].bound()}, std::vector{xs[i], ys[i]}),
                           test::sum_tolerance<double>(48));
  }
}

}  // namespace
