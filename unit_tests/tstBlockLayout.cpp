#include <einrel_BlockLayout.hpp>
#include <einrel_Error.hpp>

#include <gtest/gtest.h>

#include <map>

namespace {

using namespace einrel;
using redistribute::BlockLayout;
using redistribute::Transfer;

TEST(BlockLayout, SpreadsBlocksEvenly) {
  for (int ranks : {1, 2, 3, 4, 5, 8}) {
    const BlockLayout layout(BlockGrid({64, 32}, {4, 4}), ranks);
    std::size_t least = 1000, most = 0, total = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto mine = layout.blocks_of(r);
      least = std::min(least, mine.size());
      most = std::max(most, mine.size());
      total += mine.size();
    }
    EXPECT_EQ(total, 16u);
    EXPECT_LE(most - least, 1u) << ranks << " ranks";
  }
  EXPECT_THROW(BlockLayout(BlockGrid({4}, {2}), 0), Error);
}

// Counts, for every element of the tensor, how many received transfers cover it: exactly one, and
// inside both its source and its target block.
void check_exchange(const Bound& bound, const std::vector<Extent>& from_parts, const std::vector<Extent>& to_parts,
                    int ranks) {
  const BlockLayout from(BlockGrid(bound, from_parts), ranks), to(BlockGrid(bound, to_parts), ranks);
  std::vector<int> covered(num_elements(bound), 0);
  std::map<std::tuple<Extent, Extent>, Box> received, sent;
  for (int r = 0; r < ranks; ++r) {
    for (const Transfer& t : redistribute::transfers_received_by(from, to, r)) {
      EXPECT_EQ(t.target_rank, r);
      EXPECT_EQ(t.source_rank, from.owner(t.source_block));
      EXPECT_FALSE(t.box.empty());
      EXPECT_EQ(intersect(t.box, from.grid().box(from.grid().key(t.source_block))), t.box);
      EXPECT_EQ(intersect(t.box, to.grid().box(to.grid().key(t.target_block))), t.box);
      received[{t.source_block, t.target_block}] = t.box;
      // walk the box
      std::vector<Extent> at = t.box.lo;
      for (Extent n = 0; n < t.box.size(); ++n) {
        Extent flat = 0;
        for (std::size_t d = 0; d < bound.size(); ++d) flat = flat * bound[d] + at[d];
        ++covered[flat];
        for (int d = static_cast<int>(bound.size()) - 1; d >= 0; --d) {
          if (++at[d] < t.box.hi[d]) break;
          at[d] = t.box.lo[d];
        }
      }
    }
    for (const Transfer& t : redistribute::transfers_sent_by(from, to, r)) {
      EXPECT_EQ(t.source_rank, r);
      EXPECT_EQ(t.target_rank, to.owner(t.target_block));
      sent[{t.source_block, t.target_block}] = t.box;
    }
  }
  for (std::size_t i = 0; i < covered.size(); ++i) ASSERT_EQ(covered[i], 1) << "element " << i;
  EXPECT_EQ(sent, received);  // what is sent is exactly what is received
}

TEST(BlockLayout, TransfersCoverEveryTargetElementOnce) {
  check_exchange({16, 12}, {4, 1}, {1, 4}, 3);
  check_exchange({17, 9}, {2, 4}, {8, 2}, 4);  // uneven extents both ways
  check_exchange({5, 6, 7}, {1, 2, 4}, {4, 2, 1}, 5);
  check_exchange({33}, {8}, {8}, 2);  // same grid: only local copies
  check_exchange({}, {}, {}, 2);      // scalar
}

TEST(BlockLayout, SameLayoutMovesNothingAcrossRanks) {
  const BlockLayout a(BlockGrid({32, 32}, {4, 2}), 4);
  for (int r = 0; r < 4; ++r)
    for (const Transfer& t : redistribute::transfers_sent_by(a, a, r)) {
      EXPECT_EQ(t.target_rank, r);
      EXPECT_EQ(t.source_block, t.target_block);
    }
}

TEST(BlockLayout, DifferentBoundsAreRejected) {
  const BlockLayout a(BlockGrid({8}, {2}), 2), b(BlockGrid({9}, {2}), 2);
  EXPECT_THROW(redistribute::transfers_sent_by(a, b, 0), Error);
}

}  // namespace
