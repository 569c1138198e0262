// Redistribution over MPI: random pairs of layouts (uneven grids, replicated and multi-site blocks,
// more or fewer blocks than ranks), each rank filling its source blocks with a function of the global
// index and checking every element of its target blocks. Every rank draws the same cases from one
// seed; the cases of a test are batched so that the oversubscribed programs run few collectives.
#include <einrel_BlockMessages.hpp>
#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_TestLayouts.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

namespace {

using namespace einrel;
using comm::Communicator;
using redistribute::BlockLayout;
using redistribute::Exchange;
using redistribute::ExchangeLimits;
using redistribute::ExchangeStats;

template <class Scalar>
using DTR = redistribute::DistributedTensorRelation<Scalar, TEST_MEMSPACE>;

// The value at global C-order index i of tensor number `tag`: exact in f32 for the sizes used here.
double value_at(Extent i, int tag) { return static_cast<double>(i % 4093) + 0.25 * (tag % 7) - 1000.0; }

// This rank's blocks of `layout`, filled with value_at.
template <class Scalar>
DTR<Scalar> make_source(const Communicator& comm, const BlockLayout& layout, int tag) {
  Relation<Scalar, TEST_MEMSPACE> local(layout.grid().rank());
  for (Extent id : layout.blocks_of(comm.rank())) {
    const Key key = layout.grid().key(id);
    const Box box = layout.grid().box(key);
    std::vector<Scalar> values;
    test::for_each_element(box, layout.grid().bound(), std::vector<Extent>(box.lo.size(), 0),
                           [&](Extent flat) { values.push_back(static_cast<Scalar>(value_at(flat, tag))); });
    local.insert(key, tensor_from_host<TEST_MEMSPACE>("source", box.extents(), values));
  }
  return DTR<Scalar>(comm, layout, std::move(local));
}

// Number of elements of this rank's blocks that differ from value_at.
template <class Scalar>
Extent count_wrong(const DTR<Scalar>& r, int tag) {
  const auto expected = make_source<Scalar>(r.comm(), r.layout(), tag);
  Extent wrong = 0;
  for (const auto& [key, block] : expected.local()) {
    if (!r.holds(key)) return block.size();
    const auto want = tensor_to_host(block), got = tensor_to_host(r.block(key));
    for (std::size_t i = 0; i < want.size(); ++i) wrong += want[i] != got[i];
  }
  return wrong + static_cast<Extent>(r.local().size() - expected.local().size());
}

struct Totals {
  long long wrong = 0, sent = 0, received = 0, over_bound = 0, over_cap = 0;
};

// Draws `cases` random redistributions of Scalar tensors and runs them on one exchange.
template <class Scalar>
Totals random_redistributions(unsigned seed, int cases) {
  const Communicator comm(MPI_COMM_WORLD);
  Exchange<TEST_MEMSPACE> exchange(comm);
  TEST_EXECSPACE exec;
  std::mt19937 gen(seed);
  Totals t;
  for (int c = 0; c < cases; ++c) {
    const Bound bound = test::random_bound(gen);
    const BlockLayout from = test::random_layout(gen, bound, comm.size()),
                      to = test::random_layout(gen, bound, comm.size());
    ExchangeLimits limits;
    if (gen() % 3 == 0) limits.max_message_elements = std::uniform_int_distribution<Extent>(1, 40)(gen);
    if (gen() % 3 == 0) limits.buffer_bytes = sizeof(Scalar) * std::uniform_int_distribution<std::size_t>(2, 300)(gen);
    const auto source = make_source<Scalar>(comm, from, c);
    ExchangeStats stats;
    const auto target = redistribute::redistribute(exec, exchange, source, to, limits, &stats);
    const Extent wrong = count_wrong(target, c) + count_wrong(source, c);  // the source is only read
    if (wrong > 0)
      ADD_FAILURE() << "case " << c << " rank " << comm.rank() << ": " << wrong << " wrong elements, from "
                    << test::describe(from) << " to " << test::describe(to);
    t.wrong += wrong;
    t.sent += stats.elements_sent;
    t.received += stats.elements_received;
    // Buffers never exceed what the rank sends plus receives, nor the cap.
    const std::size_t volume = (stats.elements_sent + stats.elements_received) * sizeof(Scalar);
    t.over_bound += stats.peak_buffer_bytes > (Exchange<TEST_MEMSPACE>::stages_through_host ? 2 : 1) * volume;
    if (limits.buffer_bytes > 0)
      t.over_cap +=
          stats.peak_buffer_bytes > (Exchange<TEST_MEMSPACE>::stages_through_host ? 2 : 1) * limits.buffer_bytes;
  }
  return t;
}

void expect_consistent(Totals t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 5, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(t.wrong, 0);
  EXPECT_EQ(t.sent, t.received);  // every element sent was received
  EXPECT_EQ(t.over_bound, 0);
  EXPECT_EQ(t.over_cap, 0);
}

TEST(TEST_CATEGORY, redistribute_random_layouts_f64) { expect_consistent(random_redistributions<double>(7, 120)); }

TEST(TEST_CATEGORY, redistribute_random_layouts_f32) { expect_consistent(random_redistributions<float>(11, 40)); }

// A repartition of a whole matrix from row blocks to column blocks, spread over every rank, under a cap
// that forces many rounds, with the exchange's buffers reused between calls.
TEST(TEST_CATEGORY, redistribute_capped_rounds_reuse_buffers) {
  const Communicator comm(MPI_COMM_WORLD);
  Exchange<TEST_MEMSPACE> exchange(comm);
  TEST_EXECSPACE exec;
  const int R = comm.size();
  const BlockLayout rows(BlockGrid({97, 61}, {std::min(R, 97), 1}), R),
      cols(BlockGrid({97, 61}, {1, std::min(R, 61)}), R);
  const auto source = make_source<double>(comm, rows, 3);
  ExchangeStats free_stats, capped_stats;
  auto target = redistribute::redistribute(exec, exchange, source, cols, {}, &free_stats);
  EXPECT_EQ(count_wrong(target, 3), 0);
  const std::size_t capacity = exchange.buffer_capacity_bytes();
  const ExchangeLimits cap{1024};
  target = redistribute::redistribute(exec, exchange, source, cols, cap, &capped_stats);
  EXPECT_EQ(count_wrong(target, 3), 0);
  EXPECT_EQ(exchange.buffer_capacity_bytes(), capacity);  // the smaller rounds fit the buffers kept
  EXPECT_LE(capped_stats.peak_buffer_bytes, (Exchange<TEST_MEMSPACE>::stages_through_host ? 2 : 1) * cap.buffer_bytes);
  if (R > 1) {
    EXPECT_GT(capped_stats.rounds, 1);
  }
  EXPECT_EQ(capped_stats.elements_sent, free_stats.elements_sent);
  // And back, replicated on every rank (an allgather by the same mechanism).
  const BlockLayout all(BlockGrid({97, 61}, {1, 1}), redistribute::Placement::replicated(1, R));
  EXPECT_EQ(count_wrong(redistribute::redistribute(exec, exchange, target, all), 3), 0);
  exchange.release_buffers();
  EXPECT_EQ(exchange.buffer_capacity_bytes(), 0u);
}

TEST(TEST_CATEGORY, redistribute_rejects_foreign_blocks_before_posting) {
  const Communicator comm(MPI_COMM_WORLD);
  Exchange<TEST_MEMSPACE> exchange(comm);
  const BlockLayout a(BlockGrid({12}, {3}), comm.size()), b(BlockGrid({12}, {4}), comm.size());
  const redistribute::RedistributionPlan plan(a, b, comm.rank(), sizeof(double));
  // Every rank passes the target blocks as the source: each fails alone, before any message.
  const auto target = DTR<double>::allocate("t", comm, b);
  if (!plan.local().empty() || !plan.sends().empty()) {
    EXPECT_THROW(exchange.execute(TEST_EXECSPACE{}, plan, target.local(), target.local()), Error);
  }
  EXPECT_THROW(DTR<double>(comm, a, Relation<double, TEST_MEMSPACE>(2)), Error);  // keys of the wrong arity
  const Communicator other(MPI_COMM_WORLD);                                       // another duplicate
  const auto source = make_source<double>(other, a, 0);
  EXPECT_THROW(redistribute::redistribute(TEST_EXECSPACE{}, exchange, source, b), Error);
}

}  // namespace

namespace {

// Which pieces an exchange message moves in place (their elements contiguous in a C-order block): whole
// blocks, slabs of whole rows, and boxes whose leading extents are 1; not a box that cuts a later dimension.
TEST(TEST_CATEGORY, redistribute_contiguous_pieces_in_a_block) {
  using redistribute::detail::contiguous_offset;
  const std::vector<Extent> bound{4, 5, 6};
  EXPECT_EQ(contiguous_offset(bound, {0, 0, 0}, {4, 5, 6}), 0);
  EXPECT_EQ(contiguous_offset(bound, {1, 0, 0}, {2, 5, 6}), 30);
  EXPECT_EQ(contiguous_offset(bound, {1, 2, 0}, {1, 2, 6}), 42);
  EXPECT_EQ(contiguous_offset(bound, {1, 2, 3}, {1, 1, 2}), 45);
  EXPECT_EQ(contiguous_offset(bound, {0, 0, 0}, {2, 2, 6}), -1);
  EXPECT_EQ(contiguous_offset(bound, {0, 0, 1}, {1, 2, 5}), -1);
  EXPECT_EQ(contiguous_offset({7}, {3}, {4}), 3);
}

// From a block-sparse layout (docs/sparse.md: blocks 1 and 4 of a 3×2 grid absent) to a grid that cuts
// across it, on every rank: the target reads the source's values where a present block lies and zero where an
// absent one does, though its blocks start as garbage; nothing is sent for the absent blocks.
TEST(TEST_CATEGORY, redistribute_absent_blocks_read_zero) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size();
  const BlockGrid from_grid({9, 8}, {3, 2}), to_grid({9, 8}, {2, 3});
  std::vector<std::vector<int>> sites(6);
  for (Extent b = 0; b < 6; ++b)
    if (b != 1 && b != 4) sites[static_cast<std::size_t>(b)].push_back(static_cast<int>(b % R));
  const BlockLayout from(from_grid, redistribute::Placement::sites(sites, R)), to(to_grid, R);
  const auto source = make_source<double>(comm, from, 3);
  auto target = DTR<double>::allocate("target", comm, to);
  for (const auto& [key, block] : target.local()) Kokkos::deep_copy(block.view(), 7.0);
  Exchange<TEST_MEMSPACE> exchange(comm);
  const redistribute::RedistributionPlan plan(from, to, comm.rank(), sizeof(double));
  exchange.execute(TEST_EXECSPACE{}, plan, source.local(), target.local());
  Extent wrong = 0;
  for (const auto& [key, block] : target.local()) {
    const Box box = to_grid.box(key);
    const auto got = tensor_to_host(block);
    std::size_t i = 0;
    test::for_each_element(box, to_grid.bound(), std::vector<Extent>(2, 0), [&](Extent flat) {
      const Extent row = flat / 8, col = flat % 8;
      const Extent b = from_grid.id({from_grid.block_of(0, row), from_grid.block_of(1, col)});
      const double want = b == 1 || b == 4 ? 0.0 : value_at(flat, 3);
      wrong += got[i++] != want;
    });
  }
  EXPECT_EQ(wrong, 0);
  // The exchange moved only present blocks' elements: 8 × 9 less the absent 3×4 and 3×4.
  Extent moved = static_cast<Extent>(plan.elements_received() + plan.local_elements()), all = 0;
  MPI_Allreduce(&moved, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all, 72 - 24);
}

// Whole blocks between every pair of ranks, each of a size and values that name its sender and receiver,
// self messages included; the counts are what was posted. Blocks larger than the largest message (lowered to 1
// and 4 elements here, INT_MAX by default) go in several messages and arrive whole; 0 is refused. Rank
// `stand_in` (none: -1) stands in instead (send_nothing, discard: a failed rank's part in the engine's reduction):
// every call completes, the others' blocks from other ranks arrive whole, and nothing is left over for the next
// messages on the tag. `scale` multiplies the sizes (past MPICH's eager limit: peers wait in their sends).
void block_messages_between_every_pair(Extent largest, int stand_in = -1, Extent scale = 1) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size(), me = comm.rank();
  auto size = [scale](int from, int to) { return scale * Extent(3 + 5 * from + 2 * to); };
  auto value = [](int from, int to, Extent i) { return 1000.0 * from + 10.0 * to + static_cast<double>(i); };
  redistribute::BlockMessages<double, TEST_MEMSPACE> messages(comm.get(), 11, largest);
  std::vector<Tensor<double, TEST_MEMSPACE>> incoming;
  Extent sent = 0, received = 0;
  for (int peer = 0; peer < R; ++peer) {
    if (me == stand_in) {
      messages.discard(static_cast<std::size_t>(size(peer, me)), peer);
      continue;
    }
    incoming.push_back(Tensor<double, TEST_MEMSPACE>::uninitialized("incoming", {size(peer, me)}));
    messages.receive(incoming.back(), peer);
    received += size(peer, me);
  }
  for (int peer = 0; peer < R; ++peer) {
    if (me == stand_in) {
      messages.send_nothing(static_cast<std::size_t>(size(me, peer)), peer);
      continue;
    }
    std::vector<double> values(size(me, peer));
    for (Extent i = 0; i < size(me, peer); ++i) values[i] = value(me, peer, i);
    messages.send(tensor_from_host<TEST_MEMSPACE>("outgoing", {size(me, peer)}, values), peer);
    sent += size(me, peer);
  }
  messages.wait();
  EXPECT_EQ(messages.elements_sent(), sent);
  EXPECT_EQ(messages.elements_received(), received);
  if (me == stand_in) return;
  for (int peer = 0; peer < R; ++peer) {
    if (peer == stand_in) continue;  // nothing was sent into its block
    const std::vector<double> got = tensor_to_host(incoming[peer]);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(size(peer, me)));
    for (Extent i = 0; i < size(peer, me); ++i) EXPECT_EQ(got[i], value(peer, me, i)) << "from " << peer;
  }
}

TEST(TEST_CATEGORY, block_messages_between_every_pair) {
  for (Extent largest : {Extent{INT_MAX}, Extent{1}, Extent{4}}) block_messages_between_every_pair(largest);
  EXPECT_THROW((redistribute::BlockMessages<double, TEST_MEMSPACE>(MPI_COMM_WORLD, 11, 0)), Error);
}

TEST(TEST_CATEGORY, block_messages_with_a_stand_in) {
  const int R = Communicator(MPI_COMM_WORLD).size();
  for (int stand_in : {R - 1, 0})
    for (const auto& [largest, scale] : {std::pair{Extent{INT_MAX}, Extent{1}}, std::pair{Extent{4}, Extent{1}},
                                         std::pair{Extent{INT_MAX}, Extent{5000}}}) {
      SCOPED_TRACE("rank " + std::to_string(stand_in) + " stands in, messages of " + std::to_string(largest) +
                   ", sizes times " + std::to_string(scale));
      block_messages_between_every_pair(largest, stand_in, scale);
      block_messages_between_every_pair(largest);  // the tag is clean again
    }
}

}  // namespace
