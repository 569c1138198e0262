// The redistribution plan alone, every rank's plan computed in one process: what each rank sends is
// exactly what its peer expects, every target copy is covered once, and rounds respect the caps.
#include <einrel_Error.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Tensor.hpp>
#include <einrel_TestLayouts.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

namespace {

using namespace einrel;
using redistribute::BlockLayout;
using redistribute::ExchangeLimits;
using redistribute::Message;
using redistribute::Piece;
using redistribute::RedistributionPlan;

bool same_pieces(const std::vector<Piece>& a, const std::vector<Piece>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].source_block != b[i].source_block || a[i].target_block != b[i].target_block || !(a[i].box == b[i].box) ||
        a[i].offset != b[i].offset)
      return false;
  return true;
}

// Every element of every target copy on `rank` is written exactly once, from inside both blocks.
void check_coverage(const RedistributionPlan& plan, const BlockLayout& source, const BlockLayout& target_layout) {
  ASSERT_EQ(plan.from_grid(), source.grid());
  ASSERT_EQ(plan.to_grid(), target_layout.grid());
  ASSERT_EQ(plan.num_ranks(), source.num_ranks());
  const BlockGrid &from = plan.from_grid(), &to = plan.to_grid();
  std::map<Extent, std::vector<int>> written;
  for (Extent t : target_layout.blocks_of(plan.rank())) written[t].assign(to.box(to.key(t)).size(), 0);
  auto mark = [&](const Piece& p) {
    const Box target = to.box(to.key(p.target_block));
    ASSERT_EQ(intersect(p.box, from.box(from.key(p.source_block))), p.box);
    ASSERT_EQ(intersect(p.box, target), p.box);
    ASSERT_FALSE(p.box.empty());
    ASSERT_TRUE(written.count(p.target_block));
    test::for_each_element(p.box, target.extents(), target.lo, [&](Extent flat) { ++written[p.target_block][flat]; });
  };
  for (const Piece& p : plan.local()) {
    EXPECT_TRUE(source.placement().holds(plan.rank(), p.source_block));
    mark(p);
  }
  for (const auto& s : plan.receives()) {
    EXPECT_NE(s.peer, plan.rank());
    EXPECT_TRUE(source.placement().holds(s.peer, s.pieces.front().source_block));
    for (const Piece& p : s.pieces) mark(p);
  }
  for (const auto& [block, counts] : written)
    for (std::size_t i = 0; i < counts.size(); ++i)
      ASSERT_EQ(counts[i], 1) << "element " << i << " of target block " << block << " on rank " << plan.rank();
}

// The messages of one direction of one pair, in posting order.
std::vector<Message> messages(const RedistributionPlan& plan, int peer, bool sends) {
  std::vector<Message> out;
  for (const auto& round : plan.rounds())
    for (const Message& m : sends ? round.sends : round.receives)
      if (m.peer == peer) out.push_back(m);
  return out;
}

void check_plans(const BlockLayout& from, const BlockLayout& to, const ExchangeLimits& limits, std::size_t bytes) {
  const int R = from.num_ranks();
  std::vector<RedistributionPlan> plans;
  for (int r = 0; r < R; ++r) plans.emplace_back(from, to, r, bytes, limits);
  Extent sent = 0, received = 0;
  for (int r = 0; r < R; ++r) {
    const RedistributionPlan& plan = plans[r];
    SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(R) + " from " + test::describe(from) + " to " +
                 test::describe(to));
    check_coverage(plan, from, to);
    sent += plan.elements_sent();
    received += plan.elements_received();
    for (const auto& s : plan.sends()) {
      const RedistributionPlan& peer = plans[s.peer];
      ASSERT_TRUE(same_pieces(s.pieces, peer.receive_stream(r).pieces)) << "to rank " << s.peer;
      // Messages tile the stream in order, with the same ranges and tags at both ends.
      const auto out = messages(plan, s.peer, true), in = messages(peer, r, false);
      ASSERT_EQ(out.size(), in.size());
      Extent next = 0;
      for (std::size_t m = 0; m < out.size(); ++m) {
        EXPECT_EQ(out[m].first, next);
        EXPECT_EQ(out[m].first, in[m].first);
        EXPECT_EQ(out[m].last, in[m].last);
        EXPECT_EQ(out[m].tag, in[m].tag);
        EXPECT_LE(out[m].last - out[m].first, limits.max_message_elements);
        next = out[m].last;
      }
      EXPECT_EQ(next, s.elements);
    }
    for (const auto& round : plan.rounds()) {
      if (limits.buffer_bytes > 0) {
        EXPECT_LE((round.send_elements + round.receive_elements) * static_cast<Extent>(bytes),
                  static_cast<Extent>(limits.buffer_bytes));
      }
      Extent in_round = 0;
      for (const Message& m : round.sends) in_round += m.last - m.first;
      EXPECT_EQ(in_round, round.send_elements);
    }
    EXPECT_LE(plan.peak_buffer_elements(), plan.elements_sent() + plan.elements_received());
  }
  EXPECT_EQ(sent, received);
  // The one-pass count of the engine's dry run gives every rank's plan figures.
  const redistribute::ExchangeVolumes volumes = redistribute::exchange_volumes(from, to);
  EXPECT_TRUE(volumes.sent_off_node.empty());
  for (int r = 0; r < R; ++r) {
    EXPECT_EQ(volumes.sent[r], plans[r].elements_sent()) << "rank " << r;
    EXPECT_EQ(volumes.received[r], plans[r].elements_received()) << "rank " << r;
  }
  // With nodes of n ranks (r / n), the part to and from other nodes: each plan's streams with such peers.
  for (int n = 1; n <= R; ++n) {
    const redistribute::ExchangeVolumes split = redistribute::exchange_volumes(from, to, n);
    EXPECT_EQ(split.sent, volumes.sent);
    for (int r = 0; r < R; ++r) {
      Extent out = 0, in = 0;
      for (const auto& s : plans[r].sends()) out += s.peer / n != r / n ? s.elements : 0;
      for (const auto& s : plans[r].receives()) in += s.peer / n != r / n ? s.elements : 0;
      EXPECT_EQ(split.sent_off_node[r], out) << "rank " << r << " of nodes of " << n;
      EXPECT_EQ(split.received_off_node[r], in) << "rank " << r << " of nodes of " << n;
    }
  }
}

// Per-rank counts read back as given whatever their number of distinct values: one byte an index up to 256 of
// them, two up to 65 536, the counts themselves beyond; in runs or scattered.
TEST(RankCounts, HoldEveryRanksCount) {
  std::mt19937 gen(11);
  for (std::size_t distinct : {1u, 2u, 256u, 257u, 65536u, 65537u})
    for (bool runs : {true, false}) {
      const std::size_t R = std::max<std::size_t>(2 * distinct, 1000);
      std::vector<Extent> counts(R);
      for (std::size_t r = 0; r < R; ++r)
        counts[r] = runs ? (Extent{1} << 33) + Extent(r * distinct / R) : Extent(r % distinct) * 7;
      if (!runs) std::shuffle(counts.begin(), counts.end(), gen);
      const redistribute::RankCounts held(counts);
      ASSERT_EQ(held.size(), R);
      EXPECT_EQ(held.all(), counts) << distinct << " distinct counts";
      EXPECT_EQ(held.max(), *std::max_element(counts.begin(), counts.end()));
      EXPECT_EQ(held.sum(), std::accumulate(counts.begin(), counts.end(), Extent{0}));
      EXPECT_EQ(held, redistribute::RankCounts(counts));
    }
  EXPECT_TRUE(redistribute::RankCounts(std::vector<Extent>{}).empty());
  EXPECT_EQ(redistribute::RankCounts(std::vector<Extent>{}).max(), 0);
}

TEST(RedistributionPlan, RandomLayoutsAgreeAcrossRanks) {
  std::mt19937 gen(20261122);
  for (int c = 0; c < 400; ++c) {
    const int R = std::uniform_int_distribution<int>(1, 6)(gen);
    const Bound bound = test::random_bound(gen);
    const BlockLayout from = test::random_layout(gen, bound, R), to = test::random_layout(gen, bound, R);
    ExchangeLimits limits;
    if (gen() % 3 == 0) limits.max_message_elements = std::uniform_int_distribution<Extent>(1, 40)(gen);
    const std::size_t bytes = gen() % 2 ? 8 : 4;
    if (gen() % 3 == 0) limits.buffer_bytes = bytes * std::uniform_int_distribution<std::size_t>(2, 300)(gen);
    check_plans(from, to, limits, bytes);
    // and to another placement of the same cut (exchange_volumes' own path)
    check_plans(from, test::random_layout(gen, from.grid(), R), limits, bytes);
    if (HasFatalFailure()) return;
  }
}

TEST(RedistributionPlan, SameLayoutMovesNothingAcrossRanks) {
  const BlockLayout a(BlockGrid({32, 32}, {4, 2}), 4);
  for (int r = 0; r < 4; ++r) {
    const RedistributionPlan plan(a, a, r, 8);
    EXPECT_EQ(plan.elements_sent(), 0);
    EXPECT_EQ(plan.elements_received(), 0);
    EXPECT_TRUE(plan.rounds().empty());
    EXPECT_EQ(plan.local_elements(), 32 * 32 / 4);
  }
}

TEST(RedistributionPlan, ReplicationSendsEachCopy) {
  // Rows on 4 ranks to every rank holding everything: each rank receives the 3/4 it lacks.
  const BlockLayout rows(BlockGrid({8, 6}, {4, 1}), 4);
  const BlockLayout all(BlockGrid({8, 6}, {1, 1}), redistribute::Placement::replicated(1, 4));
  for (int r = 0; r < 4; ++r) {
    const RedistributionPlan plan(rows, all, r, 8);
    EXPECT_EQ(plan.elements_received(), 36);
    EXPECT_EQ(plan.elements_sent(), 36);
    EXPECT_EQ(plan.local_elements(), 12);
  }
}

TEST(RedistributionPlan, CapSplitsIntoRounds) {
  // 64x64 doubles from row blocks to column blocks on 2 ranks: each rank sends and receives 1024
  // elements. A 2 KiB cap gives 128-element messages, 16 steps of one send and one receive each.
  const BlockLayout rows(BlockGrid({64, 64}, {2, 1}), 2), cols(BlockGrid({64, 64}, {1, 2}), 2);
  const RedistributionPlan one(rows, cols, 0, 8), capped(rows, cols, 0, 8, {2048});
  EXPECT_EQ(one.rounds().size(), 1u);
  EXPECT_EQ(one.peak_buffer_elements(), 2048);
  EXPECT_EQ(capped.rounds().size(), 8u);
  EXPECT_EQ(capped.peak_buffer_elements(), 256);
  // Messages over the MPI count limit are split.
  const RedistributionPlan split(rows, cols, 0, 8, {0, 100});
  EXPECT_EQ(split.rounds().front().sends.size(), 11u);
}

TEST(RedistributionPlan, RejectsMismatches) {
  const BlockLayout a(BlockGrid({8}, {2}), 2), b(BlockGrid({9}, {2}), 2), c(BlockGrid({8}, {2}), 3);
  EXPECT_THROW(RedistributionPlan(a, b, 0, 8), Error);
  EXPECT_THROW(RedistributionPlan(a, c, 0, 8), Error);
  EXPECT_THROW(RedistributionPlan(a, a, 2, 8), Error);
  EXPECT_THROW(RedistributionPlan(a, a, 0, 8, {15}), Error);
  EXPECT_THROW(RedistributionPlan(a, a, 0, 8, {0, 0}), Error);
}

}  // namespace
