// The block pool: size classes, reuse only of buffers no block uses, the cache limit, statistics.
#include <einrel_BlockPool.hpp>
#include <einrel_Tensor.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;
using Pool = BlockPool<TEST_MEMSPACE>;

TEST(TEST_CATEGORY, SizeClassesWasteAtMostAnEighth) {
  for (std::size_t n : {0u, 1u, 16u, 17u, 100u, 1000u, 4097u, 1000000u}) {
    const std::size_t c = Pool::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_LE(c, n + n / 8 + 1) << n;
    EXPECT_EQ(Pool::size_class(c), c) << n;  // a class is its own class
  }
}

// The peak of the bytes the pool holds: fresh buffers raise it, reuse does not, releasing lowers what is
// held but not the peak; a reset restarts it from what is held.
TEST(TEST_CATEGORY, PeakBytesHeldFollowsFreshAllocationsAndReleases) {
  Pool& pool = Pool::instance();
  pool.release_unused();
  pool.reset_statistics();
  const std::size_t base = pool.statistics().bytes_held;  // blocks other tests still hold
  EXPECT_EQ(pool.statistics().peak_bytes_held, base);
  const std::size_t one = Pool::size_class(5000) * sizeof(double);
  {
    const auto a = Tensor<double, TEST_MEMSPACE>::uninitialized("a", {5000});
    const auto b = Tensor<double, TEST_MEMSPACE>::uninitialized("b", {5000});
  }
  EXPECT_EQ(pool.statistics().peak_bytes_held, base + 2 * one);
  { const auto c = Tensor<double, TEST_MEMSPACE>::uninitialized("c", {5000}); }
  EXPECT_EQ(pool.statistics().peak_bytes_held, base + 2 * one);  // reused
  pool.release_unused();
  EXPECT_EQ(pool.statistics().bytes_held, base);
  EXPECT_EQ(pool.statistics().peak_bytes_held, base + 2 * one);
  pool.reset_statistics();
  EXPECT_EQ(pool.statistics().peak_bytes_held, base);
}

TEST(TEST_CATEGORY, FreedBlocksAreReusedAndLiveOnesAreNot) {
  Pool& pool = Pool::instance();
  pool.release_unused();
  pool.reset_statistics();
  const void *first = nullptr, *second = nullptr;
  {
    const auto a = Tensor<double, TEST_MEMSPACE>::uninitialized("a", {100, 7});
    first = a.view().data();
    EXPECT_EQ(a.label(), "a");
    EXPECT_EQ(a.size(), 700);
    // While a lives, a block of the same class is a fresh buffer.
    const auto b = Tensor<double, TEST_MEMSPACE>::uninitialized("b", {700});
    second = b.view().data();
    EXPECT_NE(second, first);
    EXPECT_EQ(pool.statistics().fresh_allocations, 2);
    EXPECT_EQ(pool.statistics().bytes_in_use, 2 * Pool::size_class(700) * sizeof(double));
  }
  // Both gone: the next request of that class reuses a buffer; floats have buffers of their own.
  const auto c = Tensor<double, TEST_MEMSPACE>::uninitialized("c", {690});
  EXPECT_TRUE(c.view().data() == first || c.view().data() == second);
  EXPECT_EQ(pool.statistics().reuses, 1);
  const auto f = Tensor<float, TEST_MEMSPACE>::uninitialized("f", {700});
  EXPECT_EQ(pool.statistics().fresh_allocations, 3);
  // A zero-filled tensor from a reused buffer is zero.
  {
    const auto dirty = Tensor<double, TEST_MEMSPACE>::uninitialized("dirty", {5});
    Kokkos::deep_copy(dirty.view(), 3.0);
  }
  const Tensor<double, TEST_MEMSPACE> zero("zero", {5});
  for (double x : tensor_to_host(zero)) EXPECT_EQ(x, 0.0);
  pool.release_unused();
  EXPECT_EQ(pool.statistics().bytes_held, pool.statistics().bytes_in_use);
}

TEST(TEST_CATEGORY, FreeBuffersBeyondTheCacheLimitAreReleased) {
  Pool& pool = Pool::instance();
  const std::size_t limit = pool.cache_limit();
  pool.release_unused();
  pool.set_cache_limit(0);
  { const auto big = Tensor<double, TEST_MEMSPACE>::uninitialized("big", {1000}); }
  EXPECT_EQ(pool.statistics().bytes_held, Pool::size_class(1000) * sizeof(double));  // cached until the next miss
  const auto other = Tensor<double, TEST_MEMSPACE>::uninitialized("other", {3});     // a miss trims to the limit
  EXPECT_EQ(pool.statistics().bytes_held, 3 * sizeof(double));
  pool.set_cache_limit(limit);
}

}  // namespace
