#ifndef EINREL_COMMUNICATOR_HPP
#define EINREL_COMMUNICATOR_HPP

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einrel::comm {

// einrel's own duplicate of a user's communicator (ArborX/Cabana pattern): one MPI_Comm_dup per
// engine or context, shared by every relation and exchange made from it through a shared_ptr whose
// deleter frees it. MPI errors on it are returned, not fatal, so that check_mpi can turn them into
// einrel::Error. Copies share the duplicate.
class Communicator {
 public:
  // Collective over `comm`: duplicates it. Throws Error when MPI is not initialized or the dup fails.
  explicit Communicator(MPI_Comm comm);
  // Takes ownership of a communicator einrel created (MPI_Cart_create, MPI_Cart_sub, MPI_Comm_split): no
  // duplicate; freed with the last copy.
  static Communicator adopt(MPI_Comm owned);

  MPI_Comm get() const { return *comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  Communicator() = default;
  void own(MPI_Comm* comm);  // takes the new'd handle, sets the error handler, rank and size

  std::shared_ptr<MPI_Comm> comm_;
  int rank_ = 0;
  int size_ = 1;
};

// Collective over comm: the agreement on failure at a collective point. Every rank passes the message of
// the exception it caught since the last agreement, or nothing. Returns normally on every rank when no
// rank failed; otherwise throws Error on every rank with the message of the lowest failing rank, so
// that no rank goes on to post messages its failed peer will never match.
void agree_on_failure(const Communicator& comm, const std::optional<std::string>& local_failure);

// The agreements on failure this process has made, on any communicator (an engine's, its process meshes'): what
// the dry run's count of an execution's agreements is checked against.
std::uint64_t agreements_made();

// Runs f() and agrees on its outcome (agree_on_failure): collective over comm. An exception f throws
// on one rank is thrown, with its message, on every rank.
template <class F>
void collectively(const Communicator& comm, F&& f) {
  std::optional<std::string> failure;
  try {
    f();
  } catch (const std::exception& e) {
    failure = *e.what() ? e.what() : "unknown failure";
  }
  agree_on_failure(comm, failure);
}

// Collective over comm: `text` as given on rank `root`, on every rank, of any length (its length in 64 bits,
// the text in broadcasts of at most `piece` characters; tests lower it to reach the split on short texts).
std::string broadcast_string(const Communicator& comm, std::string text, int root, int piece = INT_MAX);

// Every rank's values, concatenated in rank order: rank r's are values[offsets[r] .. offsets[r + 1]).
struct Gathered {
  std::vector<long long> values;
  std::vector<std::int64_t> offsets;  // size() + 1 entries
};

// Collective over comm: every rank's `mine`, on every rank (MPI_Allgatherv). Counts and offsets are 64-bit:
// where a rank's count or the total passes MPI's int counts and displacements, the gather goes in rounds that
// move at most `piece` values of each rank and INT_MAX in all (tests lower `piece` to reach the rounds).
Gathered allgather_varying(const Communicator& comm, const std::vector<long long>& mine, std::int64_t piece = INT_MAX);

// Collective over comm: the ranks each node holds (MPI_COMM_TYPE_SHARED) where comm's ranks are numbered
// node by node, every node holding as many (rank r on node r / n); 0 where they are not.
int ranks_per_node(const Communicator& comm);

// Throws Error naming the call and MPI's own message unless rc is MPI_SUCCESS.
void check_mpi(int rc, const std::string& call);

// The MPI datatype of float and double.
template <class Scalar>
MPI_Datatype mpi_datatype();

}  // namespace einrel::comm

#endif
