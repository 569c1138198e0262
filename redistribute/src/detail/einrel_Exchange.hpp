#ifndef EINREL_EXCHANGE_HPP
#define EINREL_EXCHANGE_HPP

#include <einrel_BlockPool.hpp>
#include <einrel_BoxCopy.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_MpiMemory.hpp>
#include <einrel_ProcessMesh.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Relation.hpp>
#include <einrel_Wait.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace einrel::redistribute {

// What one execution of a RedistributionPlan did on this rank. Elements count scalars (sent and received
// are summed over the messages actually posted and completed); buffer bytes
// count the send and receive buffers in use in the busiest round (twice that when messages are staged
// through host copies of device buffers).
struct ExchangeStats {
  Extent elements_sent = 0;
  Extent elements_received = 0;
  Extent local_elements = 0;
  std::size_t peak_buffer_bytes = 0;
  int rounds = 0;
  int messages_sent = 0;
};

// Executes redistribution plans (Cabana/ArborX Distributor, COSTA transform): per round, post every
// MPI_Irecv, pack each message's pieces into one contiguous buffer, fence, MPI_Isend, copy the rank's
// local pieces while messages fly, unpack each message as MPI_Waitany returns it, wait for the sends.
// Buffers are kept and reused by later executions (grown when one needs more; release_buffers frees
// them). Without GPU-aware MPI (EINREL_ENABLE_GPU_AWARE_MPI) messages of a memory space the host cannot
// read are staged through host buffers.
template <class MemorySpace>
class Exchange {
  // Messages are sent straight from MemorySpace when MPI can read it.
  static constexpr bool direct = comm::mpi_reads_directly<MemorySpace>;

 public:
  // True when messages go through host copies of the buffers (doubling the buffer bytes).
  static constexpr bool stages_through_host = !direct;

  explicit Exchange(comm::Communicator comm) : comm_(std::move(comm)) {}

  const comm::Communicator& comm() const { return comm_; }
  // Bytes held by the reused buffers in MemorySpace (what the engine's dry run estimates beside the blocks).
  std::size_t buffer_capacity_bytes() const { return send_.extent(0) + receive_.extent(0); }
  // Bytes held by their host copies when messages are staged (0 otherwise).
  std::size_t staging_capacity_bytes() const { return send_host_.extent(0) + receive_host_.extent(0); }
  void release_buffers() { send_ = receive_ = {}, send_host_ = receive_host_ = {}; }

  // Collective over the communicator when it makes the mesh (the first call, or one for another mesh): the
  // processes laid out as `mesh` for redistributions by collectives (execute_reshard), kept with the group
  // communicators of the collectives run on it so that later calls create none.
  mesh::ProcessMesh& process_mesh(const mesh::DeviceMesh& mesh) {
    if (!mesh_ || !(mesh_->mesh() == mesh)) mesh_.emplace(comm_, mesh);
    return *mesh_;
  }

  // Local: grows the buffers to what executing `plan` on scalars of `scalar_bytes` needs and touches every
  // page of them, so that execute neither allocates nor first-touches (einrel::engine::warm_memory).
  template <class ExecutionSpace>
  void prepare(const ExecutionSpace& exec, const RedistributionPlan& plan, std::size_t scalar_bytes) {
    const auto [send_bytes, receive_bytes] = buffer_bytes(plan, scalar_bytes);
    grow_and_touch(exec, send_, send_bytes, "einrel::exchange/send");
    grow_and_touch(exec, receive_, receive_bytes, "einrel::exchange/receive");
    if constexpr (!direct) {
      const Kokkos::DefaultHostExecutionSpace host;
      grow_and_touch(host, send_host_, send_bytes, "einrel::exchange/send_host");
      grow_and_touch(host, receive_host_, receive_bytes, "einrel::exchange/receive_host");
    }
  }

  // Collective over the communicator: every rank calls it with its own plan of the same two layouts.
  // `source` holds this rank's blocks of the plan's source layout, `target` its blocks of the target layout, keyed by
  // grid keys; target elements are overwritten, source blocks are only read. Returns after the target
  // blocks are complete (fenced). Throws Error before any message is posted when a block is missing or
  // mis-shaped, or when the plan was made for another rank or communicator size.
  template <class ExecutionSpace, class Scalar>
  ExchangeStats execute(const ExecutionSpace& exec, const RedistributionPlan& plan,
                        const Relation<Scalar, MemorySpace>& source, const Relation<Scalar, MemorySpace>& target);

 private:
  using bytes_view = Kokkos::View<char*, MemorySpace>;
  using host_bytes_view = Kokkos::View<char*, Kokkos::HostSpace>;

  // Grows v to `bytes`; large host buffers get huge pages before their first touch (advise_huge_pages).
  // Returns whether it allocated.
  template <class View>
  static bool reserve(View& v, std::size_t bytes, const char* label) {
    if (v.extent(0) >= bytes) return false;
    v = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), bytes);
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible)
      advise_huge_pages(v.data(), bytes);
    return true;
  }
  template <class ExecutionSpace, class View>
  static void grow_and_touch(const ExecutionSpace& exec, View& v, std::size_t bytes, const char* label) {
    if (reserve(v, bytes, label)) Kokkos::deep_copy(exec, v, char(0));
  }
  // The bytes of the largest round of `plan` in each direction: (send, receive).
  static std::pair<std::size_t, std::size_t> buffer_bytes(const RedistributionPlan& plan, std::size_t scalar_bytes) {
    std::size_t send = 0, receive = 0;
    for (const Round& r : plan.rounds()) {
      send = std::max(send, static_cast<std::size_t>(r.send_elements) * scalar_bytes);
      receive = std::max(receive, static_cast<std::size_t>(r.receive_elements) * scalar_bytes);
    }
    return {send, receive};
  }

  // One execution of a plan on blocks of Scalar: its state and phases (execute).
  template <class ExecutionSpace, class Scalar>
  class Run;

  comm::Communicator comm_;
  std::optional<mesh::ProcessMesh> mesh_;
  bytes_view send_, receive_;
  host_bytes_view send_host_, receive_host_;
};

namespace detail {

template <class Scalar, class MemorySpace>
const Tensor<Scalar, MemorySpace>& checked_block(const Relation<Scalar, MemorySpace>& blocks, const BlockGrid& grid,
                                                 Extent id, const char* which) {
  const Key key = grid.key(id);
  if (!blocks.contains(key))
    throw Error(std::string("the ") + which + " blocks of this rank lack block " + to_string(key) + " of " +
                to_string(grid.bound()) + " cut " + to_string(grid.parts()));
  const auto& block = blocks.at(key);
  if (block.bound() != grid.box(key).extents())
    throw Error(std::string(which) + " block " + to_string(key) + " has shape " + to_string(block.bound()) +
                ", expected " + to_string(grid.box(key).extents()));
  return block;
}

// Where a piece sits inside its block of `grid`.
inline std::vector<Extent> corner_in_block(const Piece& piece, const BlockGrid& grid, Extent block) {
  const Key key = grid.key(block);
  std::vector<Extent> lo(piece.box.lo.size());
  for (std::size_t d = 0; d < lo.size(); ++d) lo[d] = piece.box.lo[d] - grid.offset(static_cast<int>(d), key[d]);
  return lo;
}

// The offset (elements) in a C-order block of `bound` at which the box of `extent` at `corner` starts, where
// the box's elements are contiguous there (every dimension after its first one longer than 1 is whole), or -1.
inline Extent contiguous_offset(const std::vector<Extent>& bound, const std::vector<Extent>& corner,
                                const std::vector<Extent>& extent) {
  std::size_t d = 0;
  while (d < extent.size() && extent[d] == 1) ++d;
  for (std::size_t e = d + 1; e < extent.size(); ++e)
    if (extent[e] != bound[e]) return -1;
  Extent offset = 0;
  for (std::size_t e = 0; e < bound.size(); ++e) offset = offset * bound[e] + corner[e];
  return offset;
}

// A message MPI reads from (or writes into) the blocks themselves, where each of its pieces' parts is
// contiguous in its block: one segment is sent as it is, several through an hindexed datatype over their
// addresses (from MPI_BOTTOM); no exchange buffer is touched. Owns the datatype.
class InPlaceMessage {
 public:
  InPlaceMessage() = default;
  InPlaceMessage(const InPlaceMessage&) = delete;
  InPlaceMessage& operator=(const InPlaceMessage&) = delete;
  InPlaceMessage(InPlaceMessage&& other) noexcept { *this = std::move(other); }
  InPlaceMessage& operator=(InPlaceMessage&& other) noexcept {
    std::swap(type_, other.type_), std::swap(derived_, other.derived_), std::swap(address_, other.address_);
    return *this;
  }
  ~InPlaceMessage() {
    if (derived_) MPI_Type_free(&type_);
  }

  // The message over `segments` (address, elements) of `element`, or none when there is no segment.
  static std::optional<InPlaceMessage> over(const std::vector<std::pair<void*, Extent>>& segments,
                                            MPI_Datatype element) {
    if (segments.empty()) return std::nullopt;
    InPlaceMessage m;
    if (segments.size() == 1) {
      m.type_ = element, m.address_ = segments[0].first;
      return m;
    }
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    for (const auto& [address, elements] : segments) {
      MPI_Aint at = 0;
      comm::check_mpi(MPI_Get_address(address, &at), "MPI_Get_address");
      lengths.push_back(static_cast<int>(elements));
      addresses.push_back(at);
    }
    comm::check_mpi(MPI_Type_create_hindexed(static_cast<int>(segments.size()), lengths.data(), addresses.data(),
                                             element, &m.type_),
                    "MPI_Type_create_hindexed");
    m.derived_ = true;
    comm::check_mpi(MPI_Type_commit(&m.type_), "MPI_Type_commit");
    m.address_ = MPI_BOTTOM;
    return m;
  }

  MPI_Datatype type() const { return type_; }
  void* address() const { return address_; }
  // The count to pass with type(): the elements of the one segment, or one of the derived type.
  int count(Extent elements) const { return derived_ ? 1 : static_cast<int>(elements); }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool derived_ = false;
  void* address_ = nullptr;
};

}  // namespace detail

template <class MemorySpace>
template <class ExecutionSpace, class Scalar>
class Exchange<MemorySpace>::Run {
  using block_view = Kokkos::View<Scalar*, MemorySpace>;
  using const_view = Kokkos::View<const Scalar*, MemorySpace>;
  using Blocks = Relation<Scalar, MemorySpace>;

 public:
  // The exchange's buffers must hold the plan's largest round (reserved by execute).
  Run(Exchange& x, const ExecutionSpace& exec, const RedistributionPlan& plan, const Blocks& source,
      const Blocks& target, std::size_t send_bytes, std::size_t receive_bytes)
      : x_(x),
        exec_(exec),
        plan_(plan),
        source_(source),
        target_(target),
        from_(plan.from_grid()),
        to_(plan.to_grid()),
        send_buffer_(reinterpret_cast<Scalar*>(x.send_.data()), send_bytes / sizeof(Scalar)),
        receive_buffer_(reinterpret_cast<Scalar*>(x.receive_.data()), receive_bytes / sizeof(Scalar)),
        send_mpi_(reinterpret_cast<Scalar*>(direct ? x.send_.data() : x.send_host_.data())),
        receive_mpi_(reinterpret_cast<Scalar*>(direct ? x.receive_.data() : x.receive_host_.data())),
        comm_(x.comm_.get()),
        type_(comm::mpi_datatype<Scalar>()) {}

  ExchangeStats run() {
    stats_.local_elements = plan_.local_elements();
    stats_.rounds = static_cast<int>(plan_.rounds().size());
    stats_.peak_buffer_bytes = plan_.peak_buffer_elements() * sizeof(Scalar) * (direct ? 1 : 2);
    if (plan_.rounds().empty()) copy_local();
    for (std::size_t r = 0; r < plan_.rounds().size(); ++r) {
      const Round& round = plan_.rounds()[r];
      if constexpr (direct) compat::fence(exec_, "einrel::exchange: blocks settled");  // MPI may write them next
      post_receives(round);
      pack(round);
      compat::fence(exec_, "einrel::exchange: packed");  // MPI reads the buffers next
      post_sends(round);
      if (r == 0) copy_local();  // overlaps the messages in flight
      unpack(round);
      comm::wait_all(sends_, "MPI_Testall");
      compat::fence(exec_, "einrel::exchange: unpacked");  // the next round reuses the buffers
    }
    compat::fence(exec_, "einrel::exchange: done");
    return stats_;
  }

 private:
  // The byte range of `count` elements from element `first` of a buffer.
  static std::pair<std::size_t, std::size_t> bytes_of(Extent first, Extent count) {
    return {first * sizeof(Scalar), (first + count) * sizeof(Scalar)};
  }

  // The rank's own pieces, and zeros where the plan's source has no block (absent).
  void copy_local() {
    for (const Piece& p : plan_.local()) {
      const auto& src = source_.at(from_.key(p.source_block));
      const auto& dst = target_.at(to_.key(p.target_block));
      // A target block that shares its view with the source block (the engine keeps blocks that stay put
      // instead of copying them) already holds the piece.
      if (src.view().data() == dst.view().data() &&
          from_.box(from_.key(p.source_block)) == to_.box(to_.key(p.target_block)))
        continue;
      copy_box(exec_, src, detail::corner_in_block(p, from_, p.source_block), dst,
               detail::corner_in_block(p, to_, p.target_block), p.box.extents());
    }
    for (const Piece& p : plan_.absent())
      fill_box(exec_, target_.at(to_.key(p.target_block)), detail::corner_in_block(p, to_, p.target_block),
               p.box.extents(), Scalar(0));
  }

  // Where MPI reads the blocks directly, a message whose parts are contiguous in their blocks goes to or from
  // them in place (detail::InPlaceMessage): no copy into or out of the exchange buffers, whose pages then stay
  // untouched.
  std::optional<detail::InPlaceMessage> in_place(const PeerStream& stream, const Message& msg, bool sending) const {
    if constexpr (!direct) {
      return std::nullopt;
    } else {
      const Blocks& blocks = sending ? source_ : target_;
      const BlockGrid& grid = sending ? from_ : to_;
      std::vector<std::pair<void*, Extent>> segments;
      bool contiguous = true;
      for_each_piece_in(stream, msg.first, msg.last, [&](const Piece& p, Extent b, Extent e) {
        const Extent id = sending ? p.source_block : p.target_block;
        const auto& block = blocks.at(grid.key(id));
        const Extent at =
            detail::contiguous_offset(block.bound(), detail::corner_in_block(p, grid, id), p.box.extents());
        contiguous = contiguous && at >= 0;
        if (contiguous) segments.emplace_back(const_cast<Scalar*>(block.view().data()) + at + b, e - b);
      });
      if (!contiguous) return std::nullopt;
      return detail::InPlaceMessage::over(segments, type_);
    }
  }

  void post_receives(const Round& round) {
    receives_.assign(round.receives.size(), MPI_REQUEST_NULL);
    received_in_place_.clear();
    for (std::size_t m = 0; m < round.receives.size(); ++m) {
      const Message& msg = round.receives[m];
      received_in_place_.push_back(in_place(plan_.receive_stream(msg.peer), msg, false));
      const auto& direct_to = received_in_place_.back();
      const int count = static_cast<int>(msg.last - msg.first);
      comm::check_mpi(direct_to ? MPI_Irecv(direct_to->address(), direct_to->count(count), direct_to->type(), msg.peer,
                                            msg.tag, comm_, &receives_[m])
                                : MPI_Irecv(receive_mpi_ + msg.buffer_offset, count, type_, msg.peer, msg.tag, comm_,
                                            &receives_[m]),
                      "MPI_Irecv");
    }
  }

  // Every message of the round not sent in place, packed into the send buffer (and its host copy).
  void pack(const Round& round) {
    sent_in_place_.clear();
    for (const Message& msg : round.sends) {
      sent_in_place_.push_back(in_place(plan_.send_stream(msg.peer), msg, true));
      if (sent_in_place_.back()) continue;
      for_each_piece_in(plan_.send_stream(msg.peer), msg.first, msg.last, [&](const Piece& p, Extent b, Extent e) {
        const auto& block = source_.at(from_.key(p.source_block));
        const auto extent = p.box.extents();
        copy_box_range(
            exec_,
            BoxPlace<const_view>{block.view(), 0, block.bound(), detail::corner_in_block(p, from_, p.source_block)},
            BoxPlace<block_view>{send_buffer_, msg.buffer_offset + p.offset - msg.first, extent,
                                 std::vector<Extent>(extent.size(), 0)},
            extent, b, e);
      });
    }
    if constexpr (!direct) {
      const auto bytes = bytes_of(0, round.send_elements);
      Kokkos::deep_copy(exec_, Kokkos::subview(x_.send_host_, bytes), Kokkos::subview(x_.send_, bytes));
    }
  }

  // The round's sends; the buffers and blocks they read must be complete (fenced).
  void post_sends(const Round& round) {
    sends_.assign(round.sends.size(), MPI_REQUEST_NULL);
    for (std::size_t m = 0; m < round.sends.size(); ++m) {
      const Message& msg = round.sends[m];
      const auto& direct_from = sent_in_place_[m];
      const int count = static_cast<int>(msg.last - msg.first);
      comm::check_mpi(
          direct_from ? MPI_Isend(direct_from->address(), direct_from->count(count), direct_from->type(), msg.peer,
                                  msg.tag, comm_, &sends_[m])
                      : MPI_Isend(send_mpi_ + msg.buffer_offset, count, type_, msg.peer, msg.tag, comm_, &sends_[m]),
          "MPI_Isend");
      ++stats_.messages_sent;
      stats_.elements_sent += msg.last - msg.first;
    }
  }

  // Each message as it arrives: its pieces copied from the receive buffer into their blocks (unless received
  // in place).
  void unpack(const Round& round) {
    for (std::size_t done = 0; done < receives_.size(); ++done) {
      const int m = comm::wait_any(receives_, "MPI_Testany");
      const Message& msg = round.receives[m];
      stats_.elements_received += msg.last - msg.first;
      if (received_in_place_[m]) continue;  // already in its blocks
      if constexpr (!direct) {
        const auto bytes = bytes_of(msg.buffer_offset, msg.last - msg.first);
        Kokkos::deep_copy(exec_, Kokkos::subview(x_.receive_, bytes), Kokkos::subview(x_.receive_host_, bytes));
      }
      for_each_piece_in(plan_.receive_stream(msg.peer), msg.first, msg.last, [&](const Piece& p, Extent b, Extent e) {
        const auto& block = target_.at(to_.key(p.target_block));
        const auto extent = p.box.extents();
        copy_box_range(
            exec_,
            BoxPlace<const_view>{receive_buffer_, msg.buffer_offset + p.offset - msg.first, extent,
                                 std::vector<Extent>(extent.size(), 0)},
            BoxPlace<block_view>{block.view(), 0, block.bound(), detail::corner_in_block(p, to_, p.target_block)},
            extent, b, e);
      });
    }
  }

  Exchange& x_;
  const ExecutionSpace& exec_;
  const RedistributionPlan& plan_;
  const Blocks &source_, &target_;
  const BlockGrid &from_, &to_;
  const block_view send_buffer_, receive_buffer_;
  Scalar* const send_mpi_;
  Scalar* const receive_mpi_;
  const MPI_Comm comm_;
  const MPI_Datatype type_;
  ExchangeStats stats_;
  std::vector<MPI_Request> receives_, sends_;
  std::vector<std::optional<detail::InPlaceMessage>> received_in_place_, sent_in_place_;
};

template <class MemorySpace>
template <class ExecutionSpace, class Scalar>
ExchangeStats Exchange<MemorySpace>::execute(const ExecutionSpace& exec, const RedistributionPlan& plan,
                                             const Relation<Scalar, MemorySpace>& source,
                                             const Relation<Scalar, MemorySpace>& target) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "einrel::redistribute::Exchange: the execution space must reach the blocks' memory space");
  if (plan.rank() != comm_.rank() || plan.num_ranks() != comm_.size())
    throw Error("a redistribution plan for rank " + std::to_string(plan.rank()) + " of " +
                std::to_string(plan.num_ranks()) + " cannot run on rank " + std::to_string(comm_.rank()) + " of " +
                std::to_string(comm_.size()));
  if (plan.element_bytes() != sizeof(Scalar))
    throw Error("a redistribution plan for " + std::to_string(plan.element_bytes()) + "-byte elements cannot move " +
                std::to_string(sizeof(Scalar)) + "-byte ones");
  const BlockGrid &from = plan.from_grid(), &to = plan.to_grid();
  // Check every block the plan touches before anything is posted, so a bad call fails on its own rank
  // without leaving messages in flight.
  for (const PeerStream& s : plan.sends())
    for (const Piece& p : s.pieces) detail::checked_block(source, from, p.source_block, "source");
  for (const PeerStream& s : plan.receives())
    for (const Piece& p : s.pieces) detail::checked_block(target, to, p.target_block, "target");
  for (const Piece& p : plan.local()) {
    detail::checked_block(source, from, p.source_block, "source");
    detail::checked_block(target, to, p.target_block, "target");
  }
  for (const Piece& p : plan.absent()) detail::checked_block(target, to, p.target_block, "target");

  const auto [send_bytes, receive_bytes] = buffer_bytes(plan, sizeof(Scalar));
  reserve(send_, send_bytes, "einrel::exchange/send");
  reserve(receive_, receive_bytes, "einrel::exchange/receive");
  if constexpr (!direct) {
    reserve(send_host_, send_bytes, "einrel::exchange/send_host");
    reserve(receive_host_, receive_bytes, "einrel::exchange/receive_host");
  }
  return Run<ExecutionSpace, Scalar>(*this, exec, plan, source, target, send_bytes, receive_bytes).run();
}

}  // namespace einrel::redistribute

#endif
