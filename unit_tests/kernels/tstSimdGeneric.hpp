#include <einrel_BlockedGenericLaunch.hpp>
#include <einrel_SimdGenericLaunch.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace einrel;
using kernels::BlockedGenericArgs;

constexpr bool host_space = Kokkos::SpaceAccessibility<TEST_EXECSPACE, Kokkos::HostSpace>::accessible;

struct Shape {
  Extent batch, m, n, k;
};

std::string describe(const Shape& s) {
  return "batch " + std::to_string(s.batch) + " m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " +
         std::to_string(s.k);
}

// Ragged against every register tile (mr 6 or 8, nr 8..48) and block (96), k = 1..3, tiny m and n,
// several batches, and k past one pass of the micro-kernels (256).
const std::vector<Shape> ragged_shapes = {
    {1, 1, 1, 1},   {1, 7, 5, 1},  {2, 3, 2, 2},     {3, 9, 25, 3},    {2, 17, 49, 5},
    {1, 1, 200, 7}, {2, 13, 1, 4}, {2, 97, 101, 11}, {1, 20, 30, 300},
};

// The direct form: what the scalar functor computes for each element, f(⊗) then ⊕ from t = 0 up, in Scalar.
template <class Scalar>
std::vector<Scalar> direct(const Shape& s, JoinOp join, AggOp agg, const MapOp& map, const std::vector<Scalar>& x,
                           const std::vector<Scalar>& y, std::vector<Scalar> z, bool accumulate) {
  auto term = [&](Scalar a, Scalar b) { return apply_map(map, apply_join(join, a, b)); };
  for (Extent b = 0; b < s.batch; ++b)
    for (Extent i = 0; i < s.m; ++i)
      for (Extent j = 0; j < s.n; ++j) {
        const Scalar* xs = x.data() + (b * s.m + i) * s.k;
        const Scalar* ys = y.data() + (b * s.n + j) * s.k;
        Scalar acc = term(xs[0], ys[0]);
        for (Extent t = 1; t < s.k; ++t) acc = apply_agg(agg, acc, term(xs[t], ys[t]));
        Scalar& out = z[(b * s.m + i) * s.n + j];
        out = accumulate ? apply_agg(agg, out, acc) : acc;
      }
  return z;
}

// Runs `launch` on X [batch][m][k], Y [batch][n][k] and Z [batch][m][n] holding x, y, z0; returns Z.
template <class Scalar, class Launch>
std::vector<Scalar> run(const Shape& s, JoinOp join, AggOp agg, const MapOp& map, const std::vector<Scalar>& x,
                        const std::vector<Scalar>& y, const std::vector<Scalar>& z0, bool accumulate, Launch&& launch) {
  const auto xt = tensor_from_host<TEST_MEMSPACE>("x", {s.batch, s.m, s.k}, x);
  const auto yt = tensor_from_host<TEST_MEMSPACE>("y", {s.batch, s.n, s.k}, y);
  const auto zt = tensor_from_host<TEST_MEMSPACE>("z", {s.batch, s.m, s.n}, z0);
  TEST_EXECSPACE exec;
  launch(exec, BlockedGenericArgs<Scalar, TEST_MEMSPACE>{xt.view(), yt.view(), zt.view(), s.batch, s.m, s.n, s.k, join,
                                                         agg, map, accumulate});
  exec.fence();
  return tensor_to_host(zt);
}

// max and min must agree to the bit, NaN with NaN; sums up to the order of their rounding.
template <class Scalar>
void expect_matches_direct(const std::vector<Scalar>& actual, const std::vector<Scalar>& expected, AggOp agg,
                           Extent k) {
  ASSERT_EQ(actual.size(), expected.size());
  const double tol = test::sum_tolerance<Scalar>(k + 1);
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const Scalar a = actual[i], e = expected[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i << ": " << a << ", expected NaN";
    } else if (agg == AggOp::sum) {
      EXPECT_NEAR(a, e, tol * std::max(1.0, std::abs(static_cast<double>(e)))) << "element " << i;
    } else {
      EXPECT_TRUE(a == e && std::signbit(a) == std::signbit(e)) << "element " << i << ": " << a << ", expected " << e;
    }
  }
}

const std::vector<std::pair<JoinOp, AggOp>> vector_pairs = {
    {JoinOp::sqdiff, AggOp::sum}, {JoinOp::add, AggOp::max}, {JoinOp::add, AggOp::min}, {JoinOp::mul, AggOp::max}};

// Every vector pair on every ISA this CPU has, against the direct form, with and without accumulate.
template <class Scalar>
void check_vector_kernels(const std::vector<Shape>& shapes, unsigned seed, double special_fraction) {
  if constexpr (host_space) {
    const auto isas = kernels::simd::supported_isas();
    if (isas.empty()) GTEST_SKIP() << "no vector ISA on this CPU or in this build";
    for (const Shape& s : shapes) {
      auto x = test::random_values<Scalar>({s.batch, s.m, s.k}, seed, -2, 2);
      auto y = test::random_values<Scalar>({s.batch, s.n, s.k}, seed + 1, -2, 2);
      const auto z0 = test::random_values<Scalar>({s.batch, s.m, s.n}, seed + 2, -2, 2);
      // Signed zeros and NaN where the scalar comparisons' choices show.
      std::mt19937 gen(seed + 3);
      std::uniform_real_distribution<double> u(0, 1);
      const Scalar special[] = {Scalar(0), -Scalar(0), std::numeric_limits<Scalar>::quiet_NaN()};
      for (auto* v : {&x, &y})
        for (auto& e : *v)
          if (u(gen) < special_fraction) e = special[gen() % 3];
      seed += 4;
      for (const kernels::simd::Isa isa : isas)
        for (const auto& [join, agg] : vector_pairs)
          for (const bool accumulate : {false, true}) {
            SCOPED_TRACE(describe(s) + " " + kernels::simd::isa_name(isa) + " " + std::string(op_name(join)) + "/" +
                         std::string(op_name(agg)) + (accumulate ? " accumulate" : ""));
            const auto z = run<Scalar>(s, join, agg, MapOp{}, x, y, z0, accumulate, [&](auto& exec, const auto& a) {
              EXPECT_TRUE(kernels::launch_simd_generic(exec, a, isa));
            });
            expect_matches_direct(z, direct(s, join, agg, MapOp{}, x, y, z0, accumulate), agg, s.k);
          }
    }
  } else {
    GTEST_SKIP() << "the vector kernels are for host execution spaces";
  }
}

TEST(TEST_CATEGORY, SimdGenericMatchesDirectFormF64) { check_vector_kernels<double>(ragged_shapes, 700, 0); }
TEST(TEST_CATEGORY, SimdGenericMatchesDirectFormF32) { check_vector_kernels<float>(ragged_shapes, 800, 0); }
TEST(TEST_CATEGORY, SimdGenericKeepsNaNAndSignedZeroChoices) {
  const std::vector<Shape> shapes = {{2, 11, 27, 6}, {1, 9, 50, 3}};
  check_vector_kernels<double>(shapes, 900, 0.1);
  check_vector_kernels<float>(shapes, 950, 0.1);
}

// Ops without a vector kernel (other pairs, a map) take the scalar functor, also through the host launch.
TEST(TEST_CATEGORY, SimdGenericFallsBackToScalarFunctor) {
  EXPECT_FALSE(kernels::simd_pair(JoinOp::sqdiff, AggOp::sum, MapOp{MapKind::sqrt, 0}));
  EXPECT_FALSE(kernels::simd_pair(JoinOp::sub, AggOp::sum, MapOp{}));
  EXPECT_FALSE(kernels::simd_pair(JoinOp::add, AggOp::prod, MapOp{}));
  EXPECT_FALSE(kernels::simd_pair(JoinOp::mul, AggOp::min, MapOp{}));
  EXPECT_EQ(kernels::simd_pair(JoinOp::add, AggOp::min, MapOp{}), kernels::simd::Pair::add_min);
  const Shape s{2, 13, 21, 9};
  const auto x = test::random_values<double>({s.batch, s.m, s.k}, 40, 0.5, 1.5);
  const auto y = test::random_values<double>({s.batch, s.n, s.k}, 41, 0.5, 1.5);
  const auto z0 = test::random_values<double>({s.batch, s.m, s.n}, 42);
  for (const auto& [join, agg, map] : std::vector<std::tuple<JoinOp, AggOp, MapOp>>{
           {JoinOp::sqdiff, AggOp::sum, {MapKind::sqrt, 0}}, {JoinOp::sub, AggOp::max, {}}}) {
    SCOPED_TRACE(std::string(op_name(join)) + "/" + std::string(op_name(agg)));
    if constexpr (host_space)
      for (const kernels::simd::Isa isa : kernels::simd::supported_isas()) {
        const auto z = run<double>(s, join, agg, map, x, y, z0, true, [&](auto& exec, const auto& a) {
          EXPECT_FALSE(kernels::launch_simd_generic(exec, a, isa));
        });
        EXPECT_EQ(z, z0);  // declined: nothing ran
      }
    const auto z = run<double>(s, join, agg, map, x, y, z0, true,
                               [](auto& exec, const auto& a) { kernels::launch_blocked_generic(exec, a); });
    expect_matches_direct(z, direct(s, join, agg, map, x, y, z0, true), agg, s.k);
  }
}

}  // namespace
