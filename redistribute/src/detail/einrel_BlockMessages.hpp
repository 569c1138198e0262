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
  // Waits for every message; received blocks are complete when this returns.
  void wait() {
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
  // One message per chunk_ elements of the block (one, empty, for an empty block).
  template <class Post, class Data>
  void post(Post mpi_post, Data* data, std::size_t n, int peer) {
    const auto chunk = static_cast<std::size_t>(chunk_);
    for (std::size_t first = 0; first == 0 || first < n; first += chunk) {
      const std::size_t count = std::min(chunk, n - first);
      requests_.push_back(MPI_REQUEST_NULL);
      comm::check_mpi(mpi_post(data + first, static_cast<int>(count), comm::mpi_datatype<Scalar>(), peer, tag_, comm_,
                               &requests_.back()),
                      "MPI_Isend/MPI_Irecv");
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
  std::vector<Block> send_blocks_, receive_blocks_;
  std::vector<HostView> send_staging_, receive_staging_;
};

}  // namespace einrel::redistribute

#endif
