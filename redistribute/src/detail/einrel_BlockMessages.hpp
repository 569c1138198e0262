#ifndef EINREL_BLOCKMESSAGES_HPP
#define EINREL_BLOCKMESSAGES_HPP

#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>
#include <einrel_MpiMemory.hpp>
#include <einrel_Tensor.hpp>
#include <einrel_Wait.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace einrel::redistribute {

// Local posting, then wait(): whole blocks sent to and received from named peers, one message each, for a
// caller that knows both sides already (the engine's reduction of partial results). Exchange moves pieces
// of blocks between layouts by a plan; this moves blocks as they are.
// Sends and receives whole blocks of Scalar, staged through host copies when MPI cannot read MemorySpace.
template <class Scalar, class MemorySpace>
class BlockMessages {
  static constexpr bool direct = comm::mpi_reads_directly<MemorySpace>;
  using Block = Tensor<Scalar, MemorySpace>;
  using HostView = Kokkos::View<Scalar*, Kokkos::HostSpace>;

 public:
  // Messages on `comm` with `tag`, which no other message in flight on comm may use. A block of more than
  // `max_message_elements` (1 to INT_MAX) goes as several messages of at most that many, in order (MPI does not
  // let messages of one pair and tag overtake each other), so that no count passes MPI's int; tests lower it to
  // run the split path on small blocks (Options::max_message_elements).
  BlockMessages(MPI_Comm comm, int tag, Extent max_message_elements = INT_MAX)
      : comm_(comm), tag_(tag), chunk_(max_message_elements) {
    if (max_message_elements < 1 || max_message_elements > INT_MAX)
      throw Error("the largest MPI message must hold between 1 and " + std::to_string(INT_MAX) + " elements, not " +
                  std::to_string(max_message_elements));
  }
  void receive(const Block& block, int peer) {
    receive_blocks_.push_back(block);
    Scalar* data = block.view().data();
    if constexpr (!direct) {
      receive_staging_.push_back(staging(block));
      data = receive_staging_.back().data();
    }
    post(MPI_Irecv, data, block.view().extent(0), peer);
  }
  // The block must be complete (fenced).
  void send(const Block& block, int peer) {
    send_blocks_.push_back(block);
    Scalar* data = block.view().data();
    if constexpr (!direct) {
      send_staging_.push_back(staging(block));
      Kokkos::deep_copy(send_staging_.back(), block.view());
      data = send_staging_.back().data();
    }
    post(MPI_Isend, data, block.view().extent(0), peer);
  }
  // A stand-in, for a rank that failed before it could send or receive its blocks (the engine's reduction, whose
  // agreement on failure comes after it): the messages a block of n elements to or from `peer` would be, empty
  // ones sent (the peer receives nothing into its block) and received ones dropped (wait takes each through one
  // host buffer as large as the largest). The peer's calls complete as they would; the failure is agreed on after.
  void send_nothing(std::size_t n, int peer) { post(MPI_Isend, static_cast<Scalar*>(nullptr), n, peer); }
  void discard(std::size_t n, int peer) { discards_.emplace_back(peer, messages(n)); }
  // Waits for every message; received blocks are complete when this returns.
  void wait() {
    drop_discarded();
    comm::wait_all(requests_, "MPI_Testall");
    if constexpr (!direct)
      for (std::size_t i = 0; i < receive_blocks_.size(); ++i)
        Kokkos::deep_copy(receive_blocks_[i].view(), receive_staging_[i]);
  }
  Extent elements_sent() const { return count(send_blocks_); }
  Extent elements_received() const { return count(receive_blocks_); }

 private:
  static HostView staging(const Block& block) {
    return HostView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "einrel::redistribute/block_staging"),
                    block.view().extent(0));
  }
  // The messages a block of n elements goes as: one per chunk_ elements, one (empty) for an empty block.
  std::size_t messages(std::size_t n) const {
    const auto chunk = static_cast<std::size_t>(chunk_);
    return n == 0 ? 1 : (n + chunk - 1) / chunk;
  }
  // Those messages of a block of n at `data`, in order; each empty where `data` is null (send_nothing).
  template <class Post>
  void post(Post mpi_post, Scalar* data, std::size_t n, int peer) {
    const auto chunk = static_cast<std::size_t>(chunk_);
    for (std::size_t i = 0, m = messages(n); i < m; ++i) {
      const std::size_t first = i * chunk, count = data ? std::min(chunk, n - first) : 0;
      requests_.push_back(MPI_REQUEST_NULL);
      comm::check_mpi(mpi_post(data ? data + first : nullptr, static_cast<int>(count), comm::mpi_datatype<Scalar>(),
                               peer, tag_, comm_, &requests_.back()),
                      "MPI_Isend/MPI_Irecv");
    }
  }
  // Receives the discarded messages, in order from each peer, into one buffer grown to the largest.
  void drop_discarded() {
    std::vector<Scalar> scratch;
    for (const auto& [peer, n] : discards_)
      for (std::size_t i = 0; i < n; ++i) {
        MPI_Status status;
        MPI_Message message = comm::probe(comm_, peer, tag_, status, "MPI_Improbe");
        int count = 0;
        comm::check_mpi(MPI_Get_count(&status, comm::mpi_datatype<Scalar>(), &count), "MPI_Get_count");
        if (static_cast<std::size_t>(count) > scratch.size()) scratch.resize(static_cast<std::size_t>(count));
        MPI_Request request;
        comm::complete(MPI_Imrecv(scratch.data(), count, comm::mpi_datatype<Scalar>(), &message, &request), request,
                       "MPI_Imrecv");
      }
  }
  static Extent count(const std::vector<Block>& blocks) {
    Extent n = 0;
    for (const Block& b : blocks) n += static_cast<Extent>(b.view().extent(0));
    return n;
  }

  MPI_Comm comm_;
  int tag_;
  Extent chunk_;  // the most elements one message holds
  std::vector<MPI_Request> requests_;
  std::vector<std::pair<int, std::size_t>> discards_;  // peer, messages to drop
  std::vector<Block> send_blocks_, receive_blocks_;
  std::vector<HostView> send_staging_, receive_staging_;
};

}  // namespace einrel::redistribute

#endif
