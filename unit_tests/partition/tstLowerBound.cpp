// receive_lower_bound against hand-derived values and against schedules whose traffic is known in closed form.
#include <einrel_LowerBound.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace einrel;
using partition::ProductShape;
using partition::receive_lower_bound;

ProductShape product(double m, double n, double k, double batch = 1) { return {m, n, k, batch}; }

TEST(LowerBound, SquareProductsAreInTheThreeDimensionalRegime) {
  const double n = 1000;
  for (double p : {2.0, 4.0, 8.0, 16.0, 64.0})
    EXPECT_NEAR(receive_lower_bound(product(n, n, n), p), 3 * std::pow(n * n * n / p, 2.0 / 3.0) - 3 * n * n / p,
                1e-6 * n * n)
        << p;
  EXPECT_EQ(receive_lower_bound(product(n, n, n), 1), 0);
  // A 2 x 2 grid (each rank holds a row strip of A and a column strip of B) receives n²/4 of each: 1.13 x bound.
  EXPECT_NEAR(0.5 * n * n / receive_lower_bound(product(n, n, n), 4), 1.135, 0.001);
  // A 2 x 2 x 2 grid of bricks reaches it at P = 8: 3 (n/2)² touched, 3n²/8 owned.
  EXPECT_NEAR(receive_lower_bound(product(n, n, n), 8), 0.75 * n * n - 0.375 * n * n, 1e-6 * n * n);
}

TEST(LowerBound, TallSkinnyIsOneDimensionalUntilPReachesTheAspect) {
  // m = 65536 rows, n = k = 256: for P <= m / n each rank needs B whole: k n (1 - 1/P), what a row split moves.
  const double m = 65536, n = 256, k = 256;
  for (double p : {2.0, 4.0, 8.0, 16.0, 64.0, 256.0})
    EXPECT_NEAR(receive_lower_bound(product(m, n, k), p), k * n * (1 - 1 / p), 1e-6 * k * n) << p;
  // The regimes meet continuously at P = m / n and at P = m n / k² (here the same P).
  const double edge = m / n;
  EXPECT_NEAR(receive_lower_bound(product(m, n, k), edge * (1 - 1e-9)), receive_lower_bound(product(m, n, k), edge),
              1e-3);
}

TEST(LowerBound, FlatProductsAreTwoDimensional) {
  // m = n = 4096, k = 64 (an outer-product-like update): a √P x √P grid that never splits k moves
  // k (m + n) / √P - k (m + n) / P, the bound, at P = 4, 16, 64.
  const double m = 4096, n = 4096, k = 64;
  for (double p : {4.0, 16.0, 64.0})
    EXPECT_NEAR(receive_lower_bound(product(m, n, k), p), k * (m + n) / std::sqrt(p) - k * (m + n) / p, 1e-6 * k * m)
        << p;
  // Continuity where the third dimension becomes large: P = m n / k² = 4096.
  EXPECT_NEAR(receive_lower_bound(product(m, n, k), 4096 * (1 - 1e-9)), receive_lower_bound(product(m, n, k), 4096),
              1e-3);
}

TEST(LowerBound, BatchesOfAtLeastPProductsNeedNothing) {
  const double n = 512;
  EXPECT_EQ(receive_lower_bound(product(n, n, n, 8), 8), 0);
  EXPECT_EQ(receive_lower_bound(product(n, n, n, 8), 4), 0);
  // 4 products on 16 ranks: each product on 4 ranks.
  EXPECT_DOUBLE_EQ(receive_lower_bound(product(n, n, n, 4), 16), receive_lower_bound(product(n, n, n), 4));
}

TEST(LowerBound, GroupsTheLabelsOfAContraction) {
  const EinSum e = EinSum::parse("bik,bkj->bij", 2);
  const auto s = partition::product_shape(resolve(e, {{3, 5, 7}, {3, 7, 11}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->batch, 3);
  EXPECT_EQ(s->rows, 5);
  EXPECT_EQ(s->inner, 7);
  EXPECT_EQ(s->cols, 11);
  // A label summed in one operand only, and a unary einsum: no product.
  EXPECT_FALSE(partition::product_shape(resolve(EinSum::parse("ikq,kj->ij", 2), {{5, 7, 2}, {7, 11}})).has_value());
  EXPECT_FALSE(partition::product_shape(resolve(EinSum::parse("ij->i", 1), {{5, 7}})).has_value());
}

}  // namespace
