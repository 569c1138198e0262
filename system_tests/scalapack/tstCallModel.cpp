// libeinrel_scalapack's decisions apart from MPI and ScaLAPACK: the blocks of a block-cyclic submatrix each
// process holds (against a plain walk over every element), the model that decides which library computes a
// call, and the plan cache's bounds.
#include <einrel_BlockCyclic.hpp>
#include <einrel_CallModel.hpp>
#include <einrel_Error.hpp>
#include <einrel_PlanCache.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <utility>

namespace einrel::scalapack {
namespace {

// Which process holds global row (or column) g: block g / b dealt round-robin from `source` (a plain
// restatement of the block-cyclic rule, sharing nothing with BlockCyclic.cpp).
int owner(std::int64_t g, std::int64_t b, int source, int procs) { return static_cast<int>((g / b + source) % procs); }
std::int64_t local_index(std::int64_t g, std::int64_t b, int procs) { return (g / b / procs) * b + g % b; }

TEST(BlockCyclic, BlocksCoverTheSubmatrixOnceWhereEachElementIsHeld) {
  std::mt19937 gen(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  for (int trial = 0; trial < 300; ++trial) {
    const int nprow = pick(1, 3), npcol = pick(1, 3);
    Descriptor d;
    d.m = pick(1, 40), d.n = pick(1, 40), d.mb = pick(1, 7), d.nb = pick(1, 7);
    d.rsrc = pick(0, nprow - 1), d.csrc = pick(0, npcol - 1);
    const std::int64_t i0 = pick(0, static_cast<int>(d.m) - 1), j0 = pick(0, static_cast<int>(d.n) - 1);
    const std::int64_t m = pick(1, static_cast<int>(d.m - i0)), n = pick(1, static_cast<int>(d.n - j0));
    std::map<std::pair<std::int64_t, std::int64_t>, int> seen;
    std::int64_t blocks = 0;
    for (int pr = 0; pr < nprow; ++pr)
      for (int pc = 0; pc < npcol; ++pc) {
        const auto mine = local_blocks(d, i0, j0, m, n, pr, pc, nprow, npcol);
        blocks += static_cast<std::int64_t>(mine.size());
        for (const LocalBlock& b : mine)
          for (std::int64_t r = 0; r < b.rows; ++r)
            for (std::int64_t c = 0; c < b.cols; ++c) {
              const std::int64_t gr = b.row + r, gc = b.col + c;
              ASSERT_EQ(owner(gr, d.mb, d.rsrc, nprow), pr);
              ASSERT_EQ(owner(gc, d.nb, d.csrc, npcol), pc);
              ASSERT_EQ(local_index(gr, d.mb, nprow), b.local_row + r);
              ASSERT_EQ(local_index(gc, d.nb, npcol), b.local_col + c);
              ++seen[{gr, gc}];
            }
      }
    EXPECT_EQ(static_cast<std::int64_t>(seen.size()), m * n);
    for (const auto& [at, times] : seen) {
      EXPECT_EQ(times, 1);
      EXPECT_TRUE(at.first >= i0 && at.first < i0 + m && at.second >= j0 && at.second < j0 + n);
    }
    EXPECT_EQ(blocks, blocks_on_grid(d, i0, j0, m, n, nprow, npcol));
  }
}

TEST(BlockCyclic, ADimensionTheGridDoesNotSplitIsOneBlock) {
  Descriptor d;
  d.m = 100, d.n = 60, d.mb = 8, d.nb = 8, d.lld = 100;
  // On a 1 x 2 grid every column block of process 0 spans all rows of the submatrix: 4 blocks (of 8 columns)
  // of rows 3..99, not 4 x 13.
  const auto blocks = local_blocks(d, 3, 0, 97, 60, 0, 0, 1, 2);
  ASSERT_EQ(blocks.size(), 4u);
  for (const LocalBlock& b : blocks) {
    EXPECT_EQ(b.row, 3);
    EXPECT_EQ(b.rows, 97);
    EXPECT_EQ(b.cols, b.col == 56 ? 4 : 8);
  }
  EXPECT_EQ(blocks_on_grid(d, 3, 0, 97, 60, 1, 2), 8);
  // On a 2 x 1 grid the columns of a process are all of them: one block per row block.
  EXPECT_EQ(local_blocks(d, 0, 0, 100, 60, 1, 0, 2, 1).size(), 6u);
}

CallShape gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t panel, int npcol) {
  CallShape call;
  call.m = m, call.n = n, call.k = k, call.panel = panel, call.npcol = npcol, call.pieces = 2 * (m + n) / panel;
  return call;
}

TEST(CallModel, AFactorizationsUpdateGoesToScaLAPACK) {
  // One step along k (k = the block size), as every trailing update of an LU, Cholesky or QR: ScaLAPACK reads
  // and writes C once, as einrel does, and einrel adds its copies.
  const engine::MachineModel machine;
  for (std::int64_t n : {64, 500, 2872, 20000})
    EXPECT_FALSE(einrel_may_win(predict(gemm(n, n, 128, 128, 2), machine, EinrelOverheads{}))) << n;
}

TEST(CallModel, ADeepProductGoesToEinrelAndPlanningPaysAtOnce) {
  // k / panel = 32 passes over C on ScaLAPACK, one on einrel.
  const CallCosts costs = predict(gemm(4096, 4096, 4096, 128, 2), engine::MachineModel{}, EinrelOverheads{});
  EXPECT_GT(costs.scalapack, costs.einrel_planned);
  EXPECT_TRUE(einrel_may_win(costs));
  EXPECT_TRUE(plan_pays(costs, 1));
}

TEST(CallModel, SmallCallsAndCopiesStayOnScaLAPACK) {
  const engine::MachineModel machine;
  EXPECT_FALSE(einrel_may_win(predict(gemm(32, 32, 4096, 8, 2), machine, EinrelOverheads{})));  // fixed cost
  // A deep product whose C stays in cache between ScaLAPACK's steps (2 MB per process).
  EXPECT_FALSE(einrel_may_win(predict(gemm(512, 512, 4096, 64, 2), machine, EinrelOverheads{})));
  CallShape tran;
  tran.m = 4000, tran.n = 4000, tran.k = 0, tran.npcol = 2;  // p?tran_, p?geadd_: nothing to gain
  EXPECT_FALSE(einrel_may_win(predict(tran, machine, EinrelOverheads{})));
}

TEST(CallModel, APlanIsMadeOnceTheCallsSeenPayForIt) {
  EinrelOverheads expensive_plans;
  expensive_plans.plan_seconds = 1.0;
  const CallCosts costs = predict(gemm(3072, 3072, 3072, 64, 2), engine::MachineModel{}, expensive_plans);
  ASSERT_TRUE(einrel_may_win(costs));
  EXPECT_FALSE(plan_pays(costs, 1));
  std::int64_t calls = 1;
  while (!plan_pays(costs, calls)) ++calls;
  const double gain = kWinMargin * (costs.common + costs.scalapack) - (costs.common + costs.einrel_planned);
  EXPECT_GE(static_cast<double>(calls) * gain, costs.plan);
  EXPECT_LT(static_cast<double>(calls - 1) * gain, costs.plan);
}

TEST(CallModel, ModeComesFromTheEnvironment) {
  unsetenv("EINREL_SCALAPACK");
  EXPECT_EQ(mode_from_environment(), Mode::automatic);
  setenv("EINREL_SCALAPACK", "on", 1);
  EXPECT_EQ(mode_from_environment(), Mode::on);
  setenv("EINREL_SCALAPACK", "off", 1);
  EXPECT_EQ(mode_from_environment(), Mode::off);
  setenv("EINREL_SCALAPACK", "sometimes", 1);
  try {
    mode_from_environment();
    ADD_FAILURE() << "no error for EINREL_SCALAPACK=sometimes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected off, on or auto"), std::string::npos) << e.what();
  }
  unsetenv("EINREL_SCALAPACK");
}

TEST(PlanCache, DropsTheLeastRecentlyUsedBeyondCountAndBytes) {
  ASSERT_EQ(PlanCache::max_products(), 16u);  // the documented defaults
  ASSERT_EQ(PlanCache::max_bytes(), std::size_t(512) << 20);
  PlanCache cache;
  const std::size_t mb = std::size_t(1) << 20;
  std::weak_ptr<void> first;
  {
    auto product = std::make_shared<int>(1);
    first = product;
    cache.keep({1}, product, 200 * mb);
  }
  cache.keep({2}, std::make_shared<int>(2), 200 * mb);
  EXPECT_NE(cache.find({1}), nullptr);                  // now {1} is the most recently used
  cache.keep({3}, std::make_shared<int>(3), 200 * mb);  // 600 MB: {2} goes
  EXPECT_EQ(cache.find({2}), nullptr);
  EXPECT_FALSE(first.expired());
  EXPECT_EQ(cache.products(), 2u);
  EXPECT_EQ(cache.bytes(), 400 * mb);
  cache.keep({4}, std::make_shared<int>(4), 600 * mb);  // larger than the bound alone: all go, it too
  EXPECT_EQ(cache.products(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_TRUE(first.expired());  // freed with its last holder
  for (std::int64_t k = 0; k < 20; ++k) cache.keep({k}, std::make_shared<int>(0), 1);
  EXPECT_EQ(cache.products(), 16u);
  EXPECT_EQ(cache.find({3}), nullptr);
  EXPECT_NE(cache.find({4}), nullptr);
  EXPECT_EQ(cache.count_call({7, 7}), 1);
  EXPECT_EQ(cache.count_call({7, 7}), 2);
}

}  // namespace
}  // namespace einrel::scalapack
