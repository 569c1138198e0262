#include <einrel_BlockLayout.hpp>
#include <einrel_Error.hpp>

#include <gtest/gtest.h>

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

}  // namespace
