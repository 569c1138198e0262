#include <einrel_BlockGrid.hpp>
#include <einrel_Error.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;

TEST(BlockGrid, UnevenExtentsPutTheRemainderFirst) {
  const BlockGrid g({10, 7}, {4, 2});
  // 10 = 3 + 3 + 2 + 2, 7 = 4 + 3
  EXPECT_EQ(g.extent(0, 0), 3);
  EXPECT_EQ(g.extent(0, 1), 3);
  EXPECT_EQ(g.extent(0, 2), 2);
  EXPECT_EQ(g.extent(0, 3), 2);
  EXPECT_EQ(g.offset(0, 3), 8);
  EXPECT_EQ(g.extent(1, 0), 4);
  EXPECT_EQ(g.offset(1, 1), 4);
  EXPECT_EQ(g.num_blocks(), 8);
}

TEST(BlockGrid, BlockOfInvertsOffsets) {
  for (Extent n : {1, 5, 16, 17, 31}) {
    for (Extent p : {1, 2, 4, 8, 16}) {
      if (p > n) continue;
      const BlockGrid g({n}, {p});
      Extent covered = 0;
      for (Extent k = 0; k < p; ++k) {
        EXPECT_EQ(g.offset(0, k), covered);
        for (Extent x = g.offset(0, k); x < g.offset(0, k) + g.extent(0, k); ++x) EXPECT_EQ(g.block_of(0, x), k);
        covered += g.extent(0, k);
      }
      EXPECT_EQ(covered, n);
    }
  }
}

TEST(BlockGrid, KeysAreCOrder) {
  const BlockGrid g({4, 6, 2}, {2, 3, 1});
  for (Extent id = 0; id < g.num_blocks(); ++id) EXPECT_EQ(g.id(g.key(id)), id);
  EXPECT_EQ(g.key(1), (std::vector<Extent>{0, 1, 0}));
  EXPECT_EQ(g.box({1, 2, 0}), (Box{{2, 4, 0}, {4, 6, 2}}));
}

TEST(BlockGrid, ScalarHasOneBlock) {
  const BlockGrid g({}, {});
  EXPECT_EQ(g.num_blocks(), 1);
  EXPECT_EQ(g.box(g.key(0)).size(), 1);
}

TEST(BlockGrid, RejectsBadParts) {
  EXPECT_THROW(BlockGrid({4}, {8}), Error);
  EXPECT_THROW(BlockGrid({4}, {0}), Error);
  EXPECT_THROW(BlockGrid({4, 4}, {2}), Error);
}

TEST(BlockGrid, RectilinearCutsAnywhere) {
  const BlockGrid g = BlockGrid::from_cuts({10, 7}, {{0, 1, 6}, {0}});
  EXPECT_EQ(g.parts(), (std::vector<Extent>{3, 1}));
  EXPECT_EQ(g.num_blocks(), 3);
  EXPECT_EQ(g.box({1, 0}), (Box{{1, 0}, {6, 7}}));
  EXPECT_EQ(g.box({2, 0}), (Box{{6, 0}, {10, 7}}));
  const std::vector<Extent> owner_of_x{0, 1, 1, 1, 1, 1, 2, 2, 2, 2};
  for (Extent x = 0; x < 10; ++x) EXPECT_EQ(g.block_of(0, x), owner_of_x[x]) << x;
  EXPECT_EQ(g.blocks_overlapping(0, 0, 7), (std::pair<Extent, Extent>{0, 2}));
  std::vector<Box> seen;
  for_each_overlap(g, Box{{3, 2}, {8, 5}}, [&](const std::vector<Extent>&, const Box& b) { seen.push_back(b); });
  EXPECT_EQ(seen, (std::vector<Box>{Box{{3, 2}, {6, 5}}, Box{{6, 2}, {8, 5}}}));
}

TEST(BlockGrid, EvenGridEqualsTheRectilinearGridOfItsCuts) {
  EXPECT_TRUE(BlockGrid({10, 7}, {4, 2}) == BlockGrid::from_cuts({10, 7}, {{0, 3, 6, 8}, {0, 4}}));
  EXPECT_FALSE(BlockGrid({10, 7}, {4, 2}) == BlockGrid::from_cuts({10, 7}, {{0, 2, 5, 8}, {0, 4}}));
}

// Regression (issue 41): blocks of edge T are what --sparse-tile T means, the last one shorter; an even grid of
// ceil(n/T) parts cuts elsewhere ([0,4),[4,7),[7,10) for n = 10, T = 4).
TEST(BlockGrid, TilesHaveTheirEdgeAndTheLastIsShorter) {
  const BlockGrid g = BlockGrid::tiles({10, 8, 3}, 4);
  EXPECT_TRUE(g == BlockGrid::from_cuts({10, 8, 3}, {{0, 4, 8}, {0, 4}, {0}}));
  EXPECT_EQ(g.box({2, 1, 0}), (Box{{8, 4, 0}, {10, 8, 3}}));
  EXPECT_FALSE(g == BlockGrid({10, 8, 3}, {3, 2, 1}));
  EXPECT_EQ(BlockGrid::tiles({}, 4).num_blocks(), 1);
  EXPECT_THROW(BlockGrid::tiles({10}, 0), Error);
}

TEST(BlockGrid, RejectsBadCuts) {
  EXPECT_THROW(BlockGrid::from_cuts({10}, {{1, 5}}), Error);     // not from 0
  EXPECT_THROW(BlockGrid::from_cuts({10}, {{0, 5, 5}}), Error);  // not strictly increasing
  EXPECT_THROW(BlockGrid::from_cuts({10}, {{0, 10}}), Error);    // a start at the bound
  EXPECT_THROW(BlockGrid::from_cuts({10, 2}, {{0}}), Error);     // wrong rank
}

TEST(BlockGrid, IntersectBoxes) {
  EXPECT_EQ(intersect(Box{{0, 0}, {4, 4}}, Box{{2, 3}, {6, 8}}), (Box{{2, 3}, {4, 4}}));
  EXPECT_TRUE(intersect(Box{{0}, {2}}, Box{{3}, {5}}).empty());
}

// block_bound and block_size are box(key(id)) without the key and the box; uniform() says whether every
// block has the same extents (block_size then answers without decoding the id).
TEST(BlockGrid, BlockBoundsAndSizesAreTheBoxes) {
  const std::vector<BlockGrid> grids{BlockGrid({10, 7}, {4, 2}),  BlockGrid({12, 8, 3}, {4, 2, 3}),
                                     BlockGrid({}, {}),           BlockGrid::from_cuts({10, 7}, {{0, 1, 6}, {0}}),
                                     BlockGrid::tiles({9, 8}, 3), BlockGrid::tiles({9, 6}, 3)};
  const std::vector<bool> uniform{false, true, true, false, false, true};
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const BlockGrid& g = grids[i];
    EXPECT_EQ(g.uniform(), uniform[i]) << i;
    Bound reused{99, 99, 99, 99};
    for (Extent id = 0; id < g.num_blocks(); ++id) {
      const Box box = g.box(g.key(id));
      EXPECT_EQ(g.block_bound(id), box.extents());
      g.block_bound(id, reused);
      EXPECT_EQ(reused, box.extents());
      EXPECT_EQ(g.block_size(id), box.size());
    }
  }
}

}  // namespace
