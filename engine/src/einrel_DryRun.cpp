#include <einrel_BlockPool.hpp>
#include <einrel_DryRun.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_ReshardVolumes.hpp>

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

// Bytes of blocks, counted twice: exactly (what the engine's census measures) and as the BlockPool
// allocates them, each block rounded up to its size class.
struct Bytes {
  std::size_t exact = 0, pooled = 0;
  static Bytes of(Extent elements, std::size_t element) {
    return {static_cast<std::size_t>(elements) * element,
            BlockPool<Kokkos::HostSpace>::size_class(static_cast<std::size_t>(elements)) * element};
  }
  Bytes& operator+=(const Bytes& b) {
    exact += b.exact;
    pooled += b.pooled;
    return *this;
  }
  Bytes& operator-=(const Bytes& b) {
    exact -= b.exact;
    pooled -= b.pooled;
    return *this;
  }
};

// The bytes of one direction's exchange buffer for one exchange of `elements` there: all of them in one
// round, or at most the limit's buffer bytes per round when one is set (RedistributionPlan's rounds,
// Exchange::buffer_bytes).
std::size_t exchange_buffer_bytes(Extent elements, std::size_t element, const redistribute::ExchangeLimits& limits) {
  const std::size_t bytes = static_cast<std::size_t>(elements) * element;
  return limits.buffer_bytes > 0 ? std::min(bytes, limits.buffer_bytes) : bytes;
}

// One rank's bytes: its blocks now and their high-water mark; its pooled memory — blocks plus the kernel
// temporaries of the call running — and its high-water mark with the vertex running when it was reached;
// and the exchange buffers, each grown to the largest exchange in its direction (Exchange::prepare). The
// estimate of the rank's allocated memory is the pooled peak plus those buffers, the two maxima the run
// report's peak_allocated_bytes adds up.
struct Held {
  Bytes bytes;
  std::size_t peak = 0;
  std::size_t send_buffer = 0, receive_buffer = 0, memory_peak = 0;
  VertexId memory_peak_vertex = 0;
  void add(const Bytes& n, VertexId during) {
    bytes += n;
    peak = std::max(peak, bytes.exact);
    note(0, during);
  }
  void remove(const Bytes& n) { bytes -= n; }
  void note(std::size_t temporaries, VertexId during) {
    if (bytes.pooled + temporaries > memory_peak) memory_peak = bytes.pooled + temporaries, memory_peak_vertex = during;
  }
  void grow_buffers(std::size_t send, std::size_t receive) {
    send_buffer = std::max(send_buffer, send);
    receive_buffer = std::max(receive_buffer, receive);
  }
  std::size_t memory_estimate() const { return memory_peak + send_buffer + receive_buffer; }
};

// The bytes of the kernel temporaries of one tuple (kernels::einsum_scratch), by its operand bounds, on the
// default execution space counted as one thread (a long generic fold's chunk partials, a few KiB, as one
// chunk each).
class ScratchBytes {
 public:
  ScratchBytes(const EinSum& e, Dtype dtype)
      : e_(e),
        target_{dtype, 1, Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Kokkos::HostSpace>::accessible} {}
  std::size_t operator()(const std::vector<Bound>& bounds, bool accumulate) {
    auto [it, fresh] = known_.try_emplace({bounds, accumulate}, 0);
    if (fresh)
      for (Extent n : kernels::einsum_scratch(resolve(e_, bounds), accumulate, target_))
        it->second += Bytes::of(n, dtype_bytes(target_.dtype)).pooled;
    return it->second;
  }

 private:
  const EinSum& e_;
  kernels::KernelTarget target_;
  std::map<std::pair<std::vector<Bound>, bool>, std::size_t> known_;
};

}  // namespace

Traffic dry_run(const Graph& graph, const Schedule& schedule, const redistribute::ExchangeLimits& limits) {
  const int R = schedule.ranks();
  Traffic traffic{std::vector<RankTraffic>(R), std::vector<Extent>(graph.size(), 0), std::vector<std::size_t>(R, 0),
                  std::vector<VertexId>(R, 0)};
  std::vector<Held> held(R);
  Lifetimes lifetimes(schedule);
  // The bytes of each live value on each rank.
  std::vector<std::vector<Bytes>> value_bytes(graph.size());
  auto bytes_on_ranks = [&](VertexId v) {
    const BlockLayout& layout = schedule.layout(v);
    std::vector<Bytes> bytes(R);
    for (Extent b = 0; b < layout.grid().num_blocks(); ++b)
      for (int i = 0; i < layout.placement().num_sites(b); ++i)
        bytes[layout.placement().site(b, i)] +=
            Bytes::of(block_size(layout.grid(), b), dtype_bytes(graph.vertex(v).dtype));
    return bytes;
  };
  auto release = [&](VertexId v) {
    for (int r = 0; r < R; ++r) held[r].remove(value_bytes[v][r]);
    value_bytes[v].clear();
  };

  for (VertexId v = 0; v < graph.size(); ++v) {
    if (!graph.vertex(v).is_input()) continue;
    value_bytes[v] = bytes_on_ranks(v);
    for (int r = 0; r < R; ++r) held[r].add(value_bytes[v][r], v);
  }
  for (VertexId v : lifetimes.unread_inputs(graph)) release(v);

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
    std::vector<Bytes> operand_bytes(R);
    std::vector<std::map<VertexId, std::set<Extent>>> shared(R);  // per rank, per producer: its blocks kept
    std::size_t collective_scratch = 0;  // the largest temporaries of a transition by collectives
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      if (schedule.shared_operand(v, k)) continue;
      const VertexId in = vertex.inputs[k];
      const BlockLayout &from = schedule.layout(in), &to = vs.operand_layout(k);
      const Transition& transition = schedule.transition(v, k);
      const bool collectives = transition.path == TransitionPath::collectives;
      const auto blocks = blocks_by_rank(to);
      for (int r = 0; r < R; ++r)
        for (Extent b : blocks[r]) {
          if (collectives ? keeps_source_tile(transition, r) : from.grid() == to.grid() && from.placement().holds(r, b))
            shared[r][in].insert(b);
          else
            operand_bytes[r] += Bytes::of(block_size(to.grid(), b), element);
        }
      const redistribute::ExchangeVolumes& volumes = transition.volumes;
      for (int r = 0; r < R; ++r) {
        traffic.ranks[r].floats_sent += volumes.sent[r];
        traffic.ranks[r].floats_received += volumes.received[r];
        moved += volumes.sent[r];
        if (!collectives)
          held[r].grow_buffers(exchange_buffer_bytes(volumes.sent[r], element, limits),
                               exchange_buffer_bytes(volumes.received[r], element, limits));
      }
      if (collectives) {
        Bytes scratch;
        for (Extent n : redistribute::reshard_scratch(*transition.plan)) scratch += Bytes::of(n, element);
        collective_scratch = std::max(collective_scratch, scratch.pooled);
      }
    }
    for (int r = 0; r < R; ++r) {
      held[r].add(operand_bytes[r], v);
      held[r].note(collective_scratch, v);
    }
    // A producer released here leaves its shared blocks to the operands.
    for (VertexId in : lifetimes.read_operands(vertex)) {
      for (int r = 0; r < R; ++r) {
        Bytes kept;
        for (Extent b : shared[r][in]) kept += Bytes::of(block_size(schedule.layout(in).grid(), b), element);
        Bytes released = value_bytes[in][r];
        released -= kept;
        held[r].remove(released);
        operand_bytes[r] += kept;
      }
      value_bytes[in].clear();
    }

    // (2) Kernels: a rank's tuples of one output block are consecutive. In place, the first operand's
    // blocks (all shared with its producer, released above) become the output's.
    const BlockGrid& out = vs.output_layout().grid();
    const bool in_place = schedule.in_place(v);
    const std::vector<Bytes> kept_as_output = in_place ? bytes_on_ranks(v) : std::vector<Bytes>(R);
    ScratchBytes scratch(vertex.resolved->einsum(), vertex.dtype);
    for (int r = 0; r < R; ++r) {
      Extent partial = -1;  // the output block of the rank's last partial
      const auto [first, last] = vs.tuples_of(r);
      traffic.ranks[r].tuples += last - first;
      for (Extent t = first; t < last; ++t) {
        const Extent g = vs.output_block(t);
        // later tuples of g accumulate into it
        if (g != partial && !in_place) held[r].add(Bytes::of(block_size(out, g), element), v);
        held[r].note(scratch(vs.tuple_bounds(t), g == partial), v);
        partial = g;
      }
      operand_bytes[r] -= kept_as_output[r];
      held[r].remove(operand_bytes[r]);
    }

    // (3) Partials move to the owner of their output block, which receives them all at once, unless the
    // reduction is deferred to the reader's transition.
    std::vector<Bytes> receive_bytes(R), sent_bytes(R);
    for (Extent g = 0; g < out.num_blocks() && !schedule.deferred(v); ++g) {
      const std::vector<int> ranks = vs.contributors(g);
      const Extent n = block_size(out, g);
      for (std::size_t i = 1; i < ranks.size(); ++i) {
        send(ranks[i], ranks[0], n);
        receive_bytes[ranks[0]] += Bytes::of(n, element);
        sent_bytes[ranks[i]] += Bytes::of(n, element);
      }
    }
    for (int r = 0; r < R; ++r) {
      held[r].add(receive_bytes[r], v);
      held[r].remove(receive_bytes[r]);
      held[r].remove(sent_bytes[r]);
    }
    value_bytes[v] = bytes_on_ranks(v);
    if (lifetimes.dead(v)) release(v);
  }
  for (int r = 0; r < R; ++r) {
    traffic.ranks[r].peak_block_bytes = held[r].peak;
    traffic.peak_memory_bytes[r] = held[r].memory_estimate();
    traffic.peak_vertex[r] = held[r].memory_peak_vertex;
  }
  return traffic;
}

}  // namespace einrel::engine
