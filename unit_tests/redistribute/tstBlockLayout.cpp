#include <einrel_BlockLayout.hpp>
#include <einrel_Error.hpp>

#include <gtest/gtest.h>

#include <random>
#include <thread>

namespace {

using namespace einrel;
using redistribute::BlockLayout;
using redistribute::Placement;

TEST(BlockLayout, SpreadsBlocksEvenly) {
  for (int ranks : {1, 2, 3, 4, 5, 8}) {
    const BlockLayout layout(BlockGrid({64, 32}, {4, 4}), ranks);
    std::size_t least = 1000, most = 0, total = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto mine = layout.blocks_of(r);
      least = std::min(least, mine.size());
      most = std::max(most, mine.size());
      total += mine.size();
      for (Extent b : mine) EXPECT_EQ(layout.owner(b), r);
    }
    EXPECT_EQ(total, 16u);
    EXPECT_LE(most - least, 1u) << ranks << " ranks";
  }
  EXPECT_THROW(BlockLayout(BlockGrid({4}, {2}), 0), Error);
}

TEST(BlockLayout, MoreRanksThanBlocksLeavesRanksIdle) {
  const BlockLayout layout(BlockGrid({8}, {2}), 5);
  std::size_t total = 0, idle = 0;
  for (int r = 0; r < 5; ++r) {
    total += layout.blocks_of(r).size();
    idle += layout.blocks_of(r).empty();
  }
  EXPECT_EQ(total, 2u);
  EXPECT_EQ(idle, 3u);
}

TEST(BlockLayout, PlacementKinds) {
  const auto all = Placement::replicated(3, 4);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(all.blocks_of(r), (std::vector<Extent>{0, 1, 2}));
  EXPECT_EQ(all.num_sites(1), 4);
  EXPECT_THROW(all.owner(0), Error);

  const auto owned = Placement::owners({2, 0, 2}, 3);
  EXPECT_EQ(owned.blocks_of(2), (std::vector<Extent>{0, 2}));
  EXPECT_TRUE(owned.blocks_of(1).empty());
  EXPECT_EQ(owned.owner(1), 0);

  const auto sites = Placement::sites({{0, 2}, {1}}, 3);
  EXPECT_TRUE(sites.holds(2, 0));
  EXPECT_FALSE(sites.holds(1, 0));
  // A reader holding a copy reads its own; others are spread over the copies by (rank + block).
  EXPECT_EQ(sites.source_for(0, 2), 2);
  EXPECT_EQ(sites.source_for(0, 1), sites.site(0, (1 + 0) % 2));
  EXPECT_EQ(sites.source_for(1, 0), 1);

  EXPECT_FALSE(sites.has_absent());
  // An empty set of sites is an absent block (docs/sparse.md): held nowhere, read from nowhere, no owner.
  const auto holes = Placement::sites({{}, {1}}, 2);
  EXPECT_TRUE(holes.has_absent());
  EXPECT_TRUE(holes.absent(0));
  EXPECT_FALSE(holes.absent(1));
  EXPECT_EQ(holes.source_for(0, 1), -1);
  EXPECT_EQ(holes.blocks_of(0), std::vector<Extent>{});
  EXPECT_THROW(holes.owner(0), Error);
  EXPECT_THROW(Placement::sites({{1, 0}}, 2), Error);
  EXPECT_THROW(Placement::sites({{0, 0}}, 2), Error);
  EXPECT_THROW(Placement::owners({3}, 3), Error);
  EXPECT_THROW(BlockLayout(BlockGrid({8}, {2}), Placement::spread(3, 2)), Error);
  EXPECT_EQ(Placement::owners({0, 0, 1, 1}, 2), Placement::spread(4, 2));
}

// An explicit placement lists each rank's blocks from an index made at the first blocks_of: the blocks it holds,
// increasing, in the placement, in a copy made before and one made after, and when threads ask at once.
TEST(BlockLayout, BlocksOfAnExplicitPlacementAreTheBlocksItHolds) {
  std::mt19937 gen(5);
  for (int trial = 0; trial < 20; ++trial) {
    const int ranks = 1 + static_cast<int>(gen() % 6);
    std::vector<std::vector<int>> sites(1 + gen() % 12);
    for (auto& s : sites)
      for (int r = 0; r < ranks; ++r)
        if (gen() % 3 == 0) s.push_back(r);
    const Placement p = Placement::sites(sites, ranks), before = p;
    std::vector<std::vector<Extent>> held(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
      for (Extent b = 0; b < p.num_blocks(); ++b)
        if (p.holds(r, b)) held[r].push_back(b);
    std::vector<std::vector<Extent>> listed(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) threads.emplace_back([&, r] { listed[r] = p.blocks_of(r); });
    for (std::thread& t : threads) t.join();
    const Placement after = p;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(listed[r], held[r]) << "trial " << trial << " rank " << r;
      EXPECT_EQ(before.blocks_of(r), held[r]) << "trial " << trial << " rank " << r;
      EXPECT_EQ(after.blocks_of(r), held[r]) << "trial " << trial << " rank " << r;
    }
  }
}

// Equal layouts have equal digests (the memo keys of the engine's transition choices), and these unequal ones differ.
TEST(BlockLayout, DigestsAreEqualExactlyForEqualLayouts) {
  const std::vector<BlockLayout> layouts{
      BlockLayout(BlockGrid({8, 6}, {2, 3}), 3),
      BlockLayout(BlockGrid({8, 6}, {2, 3}), 2),
      BlockLayout(BlockGrid({8, 6}, {3, 2}), 3),
      BlockLayout(BlockGrid({8, 6}, {2, 3}), Placement::replicated(6, 3)),
      BlockLayout(BlockGrid({8, 6}, {2, 3}), Placement::owners({2, 1, 0, 0, 1, 2}, 3)),
      BlockLayout(BlockGrid({8, 6}, {2, 3}),
                  Placement::sites({{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}, 3)),
      BlockLayout(BlockGrid::from_cuts({8, 6}, {{0, 3}, {0, 2, 4}}), 3),
      BlockLayout(BlockGrid({6, 8}, {2, 3}), 3),
      BlockLayout(BlockGrid({48}, {6}), 3)};
  for (const BlockLayout& a : layouts)
    for (const BlockLayout& b : layouts) EXPECT_EQ(a.digest() == b.digest(), a == b);
}

}  // namespace
