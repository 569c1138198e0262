#ifndef EINREL_REDISTRIBUTIONPLAN_HPP
#define EINREL_REDISTRIBUTIONPLAN_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_RankCounts.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <vector>

namespace einrel::redistribute {

// A piece of the tensor that moves: the overlap `box` (global coordinates) of block `source_block` of
// the source layout with block `target_block` of the target layout. `offset` is where its elements
// (C order over the box) start in the stream exchanged with one peer.
struct Piece {
  Extent source_block = 0;
  Extent target_block = 0;
  Box box;
  Extent offset = 0;
};

// Everything one rank sends to, or receives from, one peer: the pieces in the order both ends list
// them (target block, then source block), packed back to back into `elements` elements.
struct PeerStream {
  int peer = 0;
  std::vector<Piece> pieces;
  Extent elements = 0;
};

// One MPI message: elements [first, last) of the stream with `peer`, at `buffer_offset` (elements) in
// the round's send or receive buffer. `tag` numbers the messages of one pair of ranks in one exchange.
struct Message {
  int peer = 0;
  int tag = 0;
  Extent first = 0, last = 0, buffer_offset = 0;
};

// Messages posted together: every receive, then every send, then all are waited for before the next
// round reuses the buffers.
struct Round {
  std::vector<Message> sends, receives;
  Extent send_elements = 0, receive_elements = 0;
};

// Caps of an exchange. buffer_bytes = 0: one round, every message in flight at once, buffers as large
// as what the rank sends plus what it receives. buffer_bytes > 0 (--comm-buffer-limit): rounds whose send
// plus receive buffers hold at most that many bytes. Messages never exceed max_message_elements (MPI
// counts are int).
struct ExchangeLimits {
  std::size_t buffer_bytes = 0;
  Extent max_message_elements = INT_MAX;
};
inline bool operator==(const ExchangeLimits& a, const ExchangeLimits& b) {
  return a.buffer_bytes == b.buffer_bytes && a.max_message_elements == b.max_message_elements;
}

// What one rank does to move a tensor from one layout to another of the same bound (COSTA's local plan
// from two layouts): computed from the two layouts alone, with no communication, since every rank
// knows both. Each target copy of a block is assembled from the overlapping source blocks; a source
// block with several copies is read from the one Placement::source_for picks, and from the rank's own
// copy when it has one (a local piece). Replication is the same mechanism: a target block with several
// sites is sent to each.
//
// Rounds (docs/redistribution.md, memory-bounded exchange): the streams of a pair of ranks are cut into messages
// of at most min(max_message_elements, cap/2) elements; pair (r -> r+k mod R) takes its j-th message
// at step (k, j), and steps are visited in that order by every rank, consecutive steps sharing a round
// while the round's buffers stay within the cap. Since every rank walks the steps in the same global
// order and a round waits only for steps it has posted, no cycle of waits can form.
class RedistributionPlan {
 public:
  // Throws Error when the bounds differ, the layouts disagree on the number of ranks, `rank` is not
  // one of them, or the cap holds fewer than two elements.
  RedistributionPlan(const BlockLayout& from, const BlockLayout& to, int rank, std::size_t element_bytes,
                     const ExchangeLimits& limits = {});

  // The two layouts' grids and ranks: what executing the plan needs of them (a plan kept across executions
  // holds no O(blocks) placement).
  const BlockGrid& from_grid() const { return from_grid_; }
  const BlockGrid& to_grid() const { return to_grid_; }
  int num_ranks() const { return num_ranks_; }
  int rank() const { return rank_; }
  std::size_t element_bytes() const { return element_bytes_; }
  const ExchangeLimits& limits() const { return limits_; }
  const std::vector<PeerStream>& sends() const { return sends_; }        // by increasing peer
  const std::vector<PeerStream>& receives() const { return receives_; }  // by increasing peer
  const std::vector<Piece>& local() const { return local_; }             // copies within this rank
  // The pieces of this rank's target blocks that lie in absent source blocks (a block-sparse value,
  // docs/sparse.md): nothing is sent for them, and the exchange writes them zero.
  const std::vector<Piece>& absent() const { return absent_; }
  const std::vector<Round>& rounds() const { return rounds_; }

  Extent elements_sent() const { return sum(sends_); }
  Extent elements_received() const { return sum(receives_); }
  Extent local_elements() const;
  // The largest send + receive buffer of one round, in elements.
  Extent peak_buffer_elements() const;
  // The stream with `peer` (sends or receives); throws Error when there is none.
  const PeerStream& send_stream(int peer) const { return stream(sends_, peer); }
  const PeerStream& receive_stream(int peer) const { return stream(receives_, peer); }

 private:
  static Extent sum(const std::vector<PeerStream>& streams);
  static const PeerStream& stream(const std::vector<PeerStream>& streams, int peer);
  void plan_rounds(const ExchangeLimits& limits);

  BlockGrid from_grid_, to_grid_;
  int num_ranks_;
  int rank_;
  ExchangeLimits limits_;
  std::size_t element_bytes_;
  std::vector<PeerStream> sends_, receives_;
  std::vector<Piece> local_, absent_;
  std::vector<Round> rounds_;
};

// The elements every rank sends to and receives from other ranks when a tensor moves from `from` to
// `to`, indexed by rank: what RedistributionPlan(from, to, r, ...) gives as elements_sent() and
// elements_received() for each r, counted in one pass over the target blocks' copies instead of R plans
// (the engine's dry run for any number of ranks). Given `ranks_per_node` > 0, also the part of each that goes
// to or comes from a rank on another node (ranks r and s share one when r / ranks_per_node == s / ranks_per_node).
struct ExchangeVolumes {
  RankCounts sent, received;
  RankCounts sent_off_node, received_off_node;  // empty unless counted
};
// The volumes of these per-rank counts (empty off-node ones: not counted).
ExchangeVolumes make_volumes(const std::vector<Extent>& sent, const std::vector<Extent>& received,
                             const std::vector<Extent>& sent_off_node, const std::vector<Extent>& received_off_node);
ExchangeVolumes exchange_volumes(const BlockLayout& from, const BlockLayout& to, int ranks_per_node = 0);

// Calls f(piece, begin, end) for every piece of `stream` holding elements of stream range [first, last):
// [begin, end) is the part of the piece's own C-order enumeration in that range. Packing a message and
// unpacking it walk the same pieces.
template <class F>
void for_each_piece_in(const PeerStream& stream, Extent first, Extent last, F&& f) {
  // Pieces are back to back: start at the last one beginning at or before `first`.
  auto it = std::partition_point(stream.pieces.begin(), stream.pieces.end(),
                                 [&](const Piece& p) { return p.offset <= first; });
  if (it != stream.pieces.begin()) --it;
  for (; it != stream.pieces.end(); ++it) {
    const Piece& piece = *it;
    const Extent size = piece.box.size();
    if (piece.offset + size <= first) continue;
    if (piece.offset >= last) break;
    const Extent begin = first > piece.offset ? first - piece.offset : 0;
    const Extent end = last < piece.offset + size ? last - piece.offset : size;
    f(piece, begin, end);
  }
}

}  // namespace einrel::redistribute

#endif
