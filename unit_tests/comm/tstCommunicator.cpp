// The communicator's collectives of strings: broadcasts in pieces and the agreement on failure.
#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <optional>
#include <string>

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
