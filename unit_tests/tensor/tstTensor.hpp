#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;

TEST(TEST_CATEGORY, TensorAllocatesZeroFilledInCOrder) {
  const Tensor<double, TEST_MEMSPACE> t("t", {2, 3, 4});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.size(), 24);
  EXPECT_EQ(t.label(), "t");
  EXPECT_EQ((Tensor<float, TEST_MEMSPACE>::dtype()), Dtype::f32);
  for (double x : tensor_to_host(t)) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(c_order_strides({2, 3, 4}), (std::vector<Extent>{12, 4, 1}));
}

TEST(TEST_CATEGORY, TensorHostRoundTripAllRanks) {
  for (int rank = 0; rank <= max_rank; ++rank) {
    const Bound b(rank, 2);
    const auto values = test::random_values<float>(b, 7 + rank);
    const auto t = tensor_from_host<TEST_MEMSPACE>("r" + std::to_string(rank), b, values);
    EXPECT_EQ(t.bound(), b);
    EXPECT_EQ(tensor_to_host(t), values);
  }
}

TEST(TEST_CATEGORY, TensorRejectsBadShapes) {
  using T = Tensor<double, TEST_MEMSPACE>;
  EXPECT_THROW(T("bad", Bound(max_rank + 1, 1)), Error);
  EXPECT_THROW(T("bad", {3, 0}), Error);
  EXPECT_THROW(tensor_from_host<TEST_MEMSPACE>("short", {2, 2}, std::vector<double>(3)), Error);
  EXPECT_THROW(T({4}, typename T::view_type("v", 5)), Error);
}

}  // namespace
