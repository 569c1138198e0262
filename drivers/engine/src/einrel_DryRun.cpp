#include <einrel_DryRun.hpp>
#include <einrel_RedistributionPlan.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace einrel::engine {
namespace {

using redistribute::BlockLayout;

// Blocks of a layout per rank, in one pass over the sites.
std::vector<std::vector<Extent>> blocks_by_rank(const BlockLayout& layout) {
  std::vector<std::vector<Extent>> by_rank(layout.num_ranks());
  for (Extent b = 0; b < layout.grid().num_blocks(); ++b)
    for (int i = 0; i < layout.placement().num_sites(b); ++i) by_rank[layout.placement().site(b, i)].push_back(b);
  return by_rank;
}

Extent block_size(const BlockGrid& grid, Extent b) { return grid.box(grid.key(b)).size(); }

// One rank's block bytes: the current total, its high-water mark and the vertex running when it was reached.
struct Held {
  std::size_t bytes = 0, peak = 0;
  VertexId peak_vertex = 0;
  void add(std::size_t n, VertexId during) {
    bytes += n;
    if (bytes > peak) peak = bytes, peak_vertex = during;
  }
  void remove(std::size_t n) { bytes -= n; }
};

}  // namespace

Traffic dry_run(const Graph& graph, const Schedule& schedule) {
  const int R = schedule.ranks();
  Traffic traffic{std::vector<RankTraffic>(R), std::vector<Extent>(graph.size(), 0), std::vector<VertexId>(R, 0)};
  std::vector<Held> held(R);
  std::vector<int> uses(graph.size());
  // The bytes of each live value on each rank.
  std::vector<std::vector<std::size_t>> value_bytes(graph.size());
  auto bytes_on_ranks = [&](VertexId v) {
    const BlockLayout& layout = schedule.layout(v);
    std::vector<std::size_t> bytes(R, 0);
    for (Extent b = 0; b < layout.grid().num_blocks(); ++b)
      for (int i = 0; i < layout.placement().num_sites(b); ++i)
        bytes[layout.placement().site(b, i)] += block_size(layout.grid(), b) * dtype_bytes(graph.vertex(v).dtype);
    return bytes;
  };
  auto release_if_dead = [&](VertexId v) {
    if (uses[v] > 0 || schedule.kept(v)) return;
    for (int r = 0; r < R; ++r) held[r].remove(value_bytes[v][r]);
    value_bytes[v].clear();
  };

  for (VertexId v = 0; v < graph.size(); ++v) {
    uses[v] = schedule.uses(v);
    if (!graph.vertex(v).is_input()) continue;
    value_bytes[v] = bytes_on_ranks(v);
    for (int r = 0; r < R; ++r) held[r].add(value_bytes[v][r], v);
  }
  for (VertexId v = 0; v < graph.size(); ++v)
    if (graph.vertex(v).is_input()) release_if_dead(v);

  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const VertexSchedule& vs = schedule.vertex(v);
    const std::size_t element = dtype_bytes(vertex.dtype);
    Extent& moved = traffic.floats_moved[v];
    auto send = [&](int from, int to, Extent n) {
      traffic.ranks[from].floats_sent += n;
      traffic.ranks[to].floats_received += n;
      moved += n;
    };

    // (1) Operand copies: new blocks, or blocks shared with a producer that holds the same block here.
    std::vector<std::size_t> operand_bytes(R, 0);
    std::vector<std::map<VertexId, std::set<Extent>>> shared(R);  // per rank, per producer: its blocks kept
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      if (schedule.shared_operand(v, k)) continue;
      const VertexId in = vertex.inputs[k];
      const BlockLayout &from = schedule.layout(in), &to = vs.operand_layout(k);
      const auto blocks = blocks_by_rank(to);
      for (int r = 0; r < R; ++r)
        for (Extent b : blocks[r]) {
          if (from.grid() == to.grid() && from.placement().holds(r, b))
            shared[r][in].insert(b);
          else
            operand_bytes[r] += block_size(to.grid(), b) * element;
        }
      const redistribute::ExchangeVolumes volumes = redistribute::exchange_volumes(from, to);
      for (int r = 0; r < R; ++r) {
        traffic.ranks[r].floats_sent += volumes.sent[r];
        traffic.ranks[r].floats_received += volumes.received[r];
        moved += volumes.sent[r];
      }
    }
    for (int r = 0; r < R; ++r) held[r].add(operand_bytes[r], v);
    // A producer released here leaves its shared blocks to the operands.
    std::set<VertexId> producers(vertex.inputs.begin(), vertex.inputs.end());
    for (VertexId in : vertex.inputs) --uses[in];
    for (VertexId in : producers) {
      if (uses[in] > 0 || schedule.kept(in)) continue;
      for (int r = 0; r < R; ++r) {
        std::size_t kept = 0;
        for (Extent b : shared[r][in]) kept += block_size(schedule.layout(in).grid(), b) * element;
        held[r].remove(value_bytes[in][r] - kept);
        operand_bytes[r] += kept;
      }
      value_bytes[in].clear();
    }

    // (2) Kernels: a rank's tuples of one output block are consecutive.
    const BlockGrid& out = vs.output_layout().grid();
    for (int r = 0; r < R; ++r) {
      Extent partial = -1;  // the output block of the rank's last partial
      const auto [first, last] = vs.tuples_of(r);
      traffic.ranks[r].tuples += last - first;
      for (Extent t = first; t < last; ++t) {
        const Extent g = vs.output_block(t);
        if (g != partial) held[r].add(block_size(out, g) * element, v);  // later tuples of g accumulate into it
        partial = g;
      }
      held[r].remove(operand_bytes[r]);
    }

    // (3) Partials move to the owner of their output block, which receives them all at once.
    std::vector<std::size_t> receive_bytes(R, 0), sent_bytes(R, 0);
    for (Extent g = 0; g < out.num_blocks(); ++g) {
      const std::vector<int> ranks = vs.contributors(g);
      const Extent n = block_size(out, g);
      for (std::size_t i = 1; i < ranks.size(); ++i) {
        send(ranks[i], ranks[0], n);
        receive_bytes[ranks[0]] += n * element;
        sent_bytes[ranks[i]] += n * element;
      }
    }
    for (int r = 0; r < R; ++r) {
      held[r].add(receive_bytes[r], v);
      held[r].remove(receive_bytes[r] + sent_bytes[r]);
    }
    value_bytes[v] = bytes_on_ranks(v);
    release_if_dead(v);
  }
  for (int r = 0; r < R; ++r) {
    traffic.ranks[r].peak_block_bytes = held[r].peak;
    traffic.peak_vertex[r] = held[r].peak_vertex;
  }
  return traffic;
}

}  // namespace einrel::engine
