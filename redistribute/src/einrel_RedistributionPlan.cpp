#include <einrel_Error.hpp>
#include <einrel_RedistributionPlan.hpp>

#include <algorithm>
#include <map>
#include <tuple>

namespace einrel::redistribute {
namespace {

std::vector<PeerStream> to_streams(std::map<int, std::vector<Piece>>& by_peer) {
  std::vector<PeerStream> streams;
  for (auto& [peer, pieces] : by_peer) {
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
      return std::tie(a.target_block, a.source_block) < std::tie(b.target_block, b.source_block);
    });
    PeerStream s{peer, std::move(pieces), 0};
    for (Piece& p : s.pieces) {
      p.offset = s.elements;
      s.elements += p.box.size();
    }
    streams.push_back(std::move(s));
  }
  return streams;
}

// The stream with `peer` in streams sorted by peer, or null.
const PeerStream* find_stream(const std::vector<PeerStream>& streams, int peer) {
  const auto it =
      std::lower_bound(streams.begin(), streams.end(), peer, [](const PeerStream& s, int p) { return s.peer < p; });
  return it != streams.end() && it->peer == peer ? &*it : nullptr;
}

Extent elements_with(const std::vector<PeerStream>& streams, int peer) {
  const PeerStream* s = find_stream(streams, peer);
  return s ? s->elements : 0;
}

}  // namespace

RedistributionPlan::RedistributionPlan(const BlockLayout& from, const BlockLayout& to, int rank,
                                       std::size_t element_bytes, const ExchangeLimits& limits)
    : from_grid_(from.grid()),
      to_grid_(to.grid()),
      num_ranks_(from.num_ranks()),
      rank_(rank),
      limits_(limits),
      element_bytes_(element_bytes) {
  if (from.grid().bound() != to.grid().bound())
    throw Error("cannot redistribute between bounds " + to_string(from.grid().bound()) + " and " +
                to_string(to.grid().bound()));
  if (from.num_ranks() != to.num_ranks())
    throw Error("cannot redistribute from a layout over " + std::to_string(from.num_ranks()) + " ranks to one over " +
                std::to_string(to.num_ranks()));
  if (rank < 0 || rank >= from.num_ranks())
    throw Error("rank " + std::to_string(rank) + " is not one of the layout's " + std::to_string(from.num_ranks()));
  if (element_bytes == 0) throw Error("an exchange needs the size of an element");
  if (limits.max_message_elements < 1 || limits.max_message_elements > INT_MAX)
    throw Error("the largest MPI message must hold between 1 and " + std::to_string(INT_MAX) + " elements, not " +
                std::to_string(limits.max_message_elements));
  if (limits.buffer_bytes > 0 && limits.buffer_bytes < 2 * element_bytes)
    throw Error("a communication buffer limit of " + std::to_string(limits.buffer_bytes) +
                " bytes cannot hold one element to send and one to receive (" + std::to_string(2 * element_bytes) +
                " bytes)");

  const BlockGrid &source = from.grid(), &target = to.grid();
  const Placement &source_sites = from.placement(), &target_sites = to.placement();

  // Receives and local copies: every overlap of a target block this rank holds with a source block.
  std::map<int, std::vector<Piece>> receives;
  for (Extent t : target_sites.blocks_of(rank))
    for_each_overlap(source, target.box(target.key(t)), [&](const std::vector<Extent>& key, const Box& box) {
      const Extent s = source.id(key);
      const int site = source_sites.source_for(s, rank);
      (site < 0 ? absent_ : site == rank ? local_ : receives[site]).push_back({s, t, box, 0});
    });

  // Sends: every overlap of a source block this rank holds with a target block, to each target site
  // that reads this copy.
  std::map<int, std::vector<Piece>> sends;
  for (Extent s : source_sites.blocks_of(rank))
    for_each_overlap(target, source.box(source.key(s)), [&](const std::vector<Extent>& key, const Box& box) {
      const Extent t = target.id(key);
      for (int i = 0; i < target_sites.num_sites(t); ++i) {
        const int site = target_sites.site(t, i);
        if (site != rank && source_sites.source_for(s, site) == rank) sends[site].push_back({s, t, box, 0});
      }
    });

  sends_ = to_streams(sends);
  receives_ = to_streams(receives);
  plan_rounds(limits);
}

void RedistributionPlan::plan_rounds(const ExchangeLimits& limits) {
  const int R = num_ranks_;
  const Extent cap = limits.buffer_bytes > 0 ? static_cast<Extent>(limits.buffer_bytes / element_bytes_) : 0;
  const Extent chunk = cap > 0 ? std::min<Extent>(limits.max_message_elements, cap / 2) : limits.max_message_elements;
  Round round;
  auto close_round = [&] {
    if (!round.sends.empty() || !round.receives.empty()) rounds_.push_back(std::move(round));
    round = Round{};
  };
  for (int k = 1; k < R; ++k) {
    const int to_peer = (rank_ + k) % R, from_peer = (rank_ - k + R) % R;
    const Extent out = elements_with(sends_, to_peer), in = elements_with(receives_, from_peer);
    const Extent steps = std::max((out + chunk - 1) / chunk, (in + chunk - 1) / chunk);
    for (Extent j = 0; j < steps; ++j) {
      const Extent send_n = std::clamp<Extent>(out - j * chunk, 0, chunk);
      const Extent recv_n = std::clamp<Extent>(in - j * chunk, 0, chunk);
      if (cap > 0 && round.send_elements + round.receive_elements + send_n + recv_n > cap) close_round();
      // MPI guarantees tags up to 32767 only; messages of one pair are also matched in posting order.
      const int tag = static_cast<int>(j % 32768);
      if (send_n > 0) {
        round.sends.push_back({to_peer, tag, j * chunk, j * chunk + send_n, round.send_elements});
        round.send_elements += send_n;
      }
      if (recv_n > 0) {
        round.receives.push_back({from_peer, tag, j * chunk, j * chunk + recv_n, round.receive_elements});
        round.receive_elements += recv_n;
      }
    }
  }
  close_round();
}

ExchangeVolumes exchange_volumes(const BlockLayout& from, const BlockLayout& to, int ranks_per_node) {
  if (from.grid().bound() != to.grid().bound() || from.num_ranks() != to.num_ranks())
    throw Error("exchange volumes need two layouts of one bound over the same ranks");
  const auto R = static_cast<std::size_t>(from.num_ranks());
  const bool nodes = ranks_per_node > 0;
  std::vector<Extent> sent(R, 0), received(R, 0), sent_off(nodes ? R : 0, 0), received_off(nodes ? R : 0, 0);
  const BlockGrid &source = from.grid(), &target = to.grid();
  const Placement &writing = from.placement(), &reading = to.placement();
  auto node = [ranks_per_node](int rank) { return rank / ranks_per_node; };
  // n elements of source block s reaching each reader of target block t from the copy that serves it.
  auto add = [&](Extent t, Extent s, Extent n) {
    for (int i = 0; i < reading.num_sites(t); ++i) {
      const int reader = reading.site(t, i), writer = writing.source_for(s, reader);
      if (writer == reader || writer < 0) continue;
      sent[writer] += n;
      received[reader] += n;
      if (nodes && node(writer) != node(reader)) sent_off[writer] += n, received_off[reader] += n;
    }
  };
  // The same where every source block overlapping t has one site w: w sends its n elements to every reader of t
  // but itself, and every reader receives all of t's elements but those it writes itself (off node: those written
  // on other nodes, to readers on other nodes). O(readers + overlaps) per target block instead of their product,
  // which a block read by many ranks from many source blocks makes the planner's largest cost at p = R = 16 384.
  std::vector<std::pair<Extent, Extent>> pieces;     // (source block, elements) of the target block
  std::vector<std::pair<int, Extent>> reader_nodes;  // (node, readers on it), by node
  std::vector<std::pair<int, Extent>> written;       // (node, elements written on it), by node
  auto on = [](const std::vector<std::pair<int, Extent>>& counts, int n) {
    const auto it = std::lower_bound(counts.begin(), counts.end(), std::pair<int, Extent>{n, 0},
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
    return it != counts.end() && it->first == n ? it->second : Extent{0};
  };
  auto add_block = [&](Extent t) {
    const int readers = reading.num_sites(t);
    if (readers == 0) return;
    if (!std::all_of(pieces.begin(), pieces.end(), [&](const auto& p) { return writing.num_sites(p.first) == 1; })) {
      for (const auto& [s, n] : pieces) add(t, s, n);
      return;
    }
    Extent total = 0;
    for (const auto& [s, n] : pieces) total += n;
    for (int i = 0; i < readers; ++i) received[reading.site(t, i)] += total;
    for (const auto& [s, n] : pieces) {
      const int w = writing.site(s, 0);
      const bool reads = reading.holds(w, t);
      sent[w] += n * (readers - reads);
      if (reads) received[w] -= n;
    }
    if (!nodes) return;
    reader_nodes.clear();
    for (int i = 0; i < readers; ++i) {  // sites increase, so their nodes do
      const int n = node(reading.site(t, i));
      if (reader_nodes.empty() || reader_nodes.back().first != n) reader_nodes.emplace_back(n, 0);
      ++reader_nodes.back().second;
    }
    written.clear();
    for (const auto& [s, n] : pieces) written.emplace_back(node(writing.site(s, 0)), n);
    std::sort(written.begin(), written.end());
    std::size_t kept = 0;  // merged by node
    for (std::size_t i = 0; i < written.size(); ++i)
      if (kept > 0 && written[kept - 1].first == written[i].first)
        written[kept - 1].second += written[i].second;
      else
        written[kept++] = written[i];
    written.resize(kept);
    for (const auto& [s, n] : pieces) {
      const int w = writing.site(s, 0);
      sent_off[w] += n * (readers - on(reader_nodes, node(w)));
    }
    for (int i = 0; i < readers; ++i) {
      const int r = reading.site(t, i);
      received_off[r] += total - on(written, node(r));
    }
  };
  const bool same_cut = source == target;  // each target block is its source block (most pairs a planner costs)
  for (Extent t = 0; t < target.num_blocks(); ++t) {
    pieces.clear();
    if (same_cut)
      pieces.emplace_back(t, target.block_size(t));
    else
      for_each_overlap(source, target.box(target.key(t)), [&](const std::vector<Extent>& key, const Box& box) {
        pieces.emplace_back(source.id(key), box.size());
      });
    add_block(t);
  }
  return make_volumes(sent, received, sent_off, received_off);
}

ExchangeVolumes make_volumes(const std::vector<Extent>& sent, const std::vector<Extent>& received,
                             const std::vector<Extent>& sent_off_node, const std::vector<Extent>& received_off_node) {
  return {RankCounts(sent), RankCounts(received), RankCounts(sent_off_node), RankCounts(received_off_node)};
}

Extent RedistributionPlan::local_elements() const {
  Extent n = 0;
  for (const Piece& p : local_) n += p.box.size();
  return n;
}

Extent RedistributionPlan::peak_buffer_elements() const {
  Extent peak = 0;
  for (const Round& r : rounds_) peak = std::max(peak, r.send_elements + r.receive_elements);
  return peak;
}

Extent RedistributionPlan::sum(const std::vector<PeerStream>& streams) {
  Extent n = 0;
  for (const PeerStream& s : streams) n += s.elements;
  return n;
}

const PeerStream& RedistributionPlan::stream(const std::vector<PeerStream>& streams, int peer) {
  if (const PeerStream* s = find_stream(streams, peer)) return *s;
  throw Error("the exchange has no stream with rank " + std::to_string(peer));
}

}  // namespace einrel::redistribute
