// The communicator's collectives of strings and varying counts: broadcasts in pieces, gathers in rounds and the
// agreement on failure.
#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using einrel::comm::Communicator;
namespace comm = einrel::comm;

// A text of n characters that differ by position (NUL among them), made alike on every rank.
std::string text_of(std::size_t n) {
  std::string text(n, '\0');
  for (std::size_t i = 0; i < n; ++i) text[i] = static_cast<char>((i * 37 + 11) % 256);
  return text;
}

// Texts longer than a piece arrive whole: the split path that texts past INT_MAX characters take, on short ones.
TEST(Communicator, BroadcastStringsArriveWholeInPieces) {
  const Communicator comm(MPI_COMM_WORLD);
  const int root = comm.size() - 1;
  for (std::size_t n : {0, 1, 5, 17, 4096})
    for (int piece : {1, 4, 5, 1000, INT_MAX}) {
      const std::string sent = comm.rank() == root ? text_of(n) : std::string("stale text on this rank");
      EXPECT_EQ(comm::broadcast_string(comm, sent, root, piece), text_of(n)) << n << " characters, pieces of " << piece;
    }
  EXPECT_THROW(comm::broadcast_string(comm, "x", 0, 0), einrel::Error);
}

// Rank r's j-th value in the gather tests: distinct across ranks and positions, negative ones and ones past 2^32
// among them.
long long value_of(int rank, std::int64_t j) { return (j % 3 == 0 ? -1 : 1) * (rank * 1000003LL + j * 4294967311LL); }

// Every rank's values arrive in rank order with 64-bit offsets, whether the gather takes one round or many:
// ranks with none, ranks with more than a piece, pieces of one value. The rounds are the path counts past 2^31
// take, reached here on short lists.
TEST(Communicator, GathersOfVaryingCountsArriveWholeInRounds) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 random(2026);  // the same draws on every rank
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(comm.size()));
    for (auto& c : counts) c = trial == 0 ? 0 : static_cast<std::int64_t>(random() % 40) * (random() % 4 != 0);
    std::vector<long long> mine;
    for (std::int64_t j = 0; j < counts[comm.rank()]; ++j) mine.push_back(value_of(comm.rank(), j));
    for (std::int64_t piece : {std::int64_t{1}, std::int64_t{3}, std::int64_t{16}, std::int64_t{INT_MAX}}) {
      const comm::Gathered all = comm::allgather_varying(comm, mine, piece);
      ASSERT_EQ(all.offsets.size(), counts.size() + 1);
      EXPECT_EQ(all.offsets[0], 0);
      std::vector<long long> expected;
      for (int r = 0; r < comm.size(); ++r) {
        EXPECT_EQ(all.offsets[r + 1] - all.offsets[r], counts[r]) << "rank " << r << ", trial " << trial;
        for (std::int64_t j = 0; j < counts[r]; ++j) expected.push_back(value_of(r, j));
      }
      EXPECT_EQ(all.values, expected) << "trial " << trial << ", pieces of " << piece;
    }
  }
  EXPECT_THROW(comm::allgather_varying(comm, {}, 0), einrel::Error);
  EXPECT_THROW(comm::allgather_varying(comm, {}, std::int64_t{INT_MAX} + 1), einrel::Error);
}

// The lowest failing rank's message reaches every rank; without a failure every rank returns.
TEST(Communicator, AgreementCarriesTheLowestFailingRanksMessage) {
  const Communicator comm(MPI_COMM_WORLD);
  EXPECT_NO_THROW(comm::agree_on_failure(comm, std::nullopt));
  const int first = comm.size() / 2;
  const std::optional<std::string> mine =
      comm.rank() >= first ? std::optional<std::string>("failed on rank " + std::to_string(comm.rank())) : std::nullopt;
  try {
    comm::agree_on_failure(comm, mine);
    FAIL() << "no rank threw";
  } catch (const einrel::Error& e) {
    EXPECT_EQ(std::string(e.what()), "failed on rank " + std::to_string(first));
  }
}

}  // namespace
