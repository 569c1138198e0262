#include <einrel_BlockPool.hpp>
#include <einrel_CublasGemm.hpp>
#include <einrel_DryRun.hpp>
#include <einrel_Error.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_RankSteps.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

namespace einrel::engine {
namespace {

using redistribute::BlockLayout;

// The bytes of one direction's exchange buffer for one exchange of `elements` there: all of them in one
// round, or at most the limit's buffer bytes per round when one is set (RedistributionPlan's rounds,
// Exchange::buffer_bytes).
std::size_t exchange_buffer_bytes(Extent elements, std::size_t element, const redistribute::ExchangeLimits& limits) {
  const std::size_t bytes = static_cast<std::size_t>(elements) * element;
  return limits.buffer_bytes > 0 ? std::min(bytes, limits.buffer_bytes) : bytes;
}

// The smallest GEMM dimension of a binary contraction: the extents of its row labels (X's and the output's),
// column labels (Y's and the output's) and inner labels (X's and Y's, aggregated), each multiplied; labels of
// all three are the batch. 0 when it is no contraction of rows, columns and inner labels (a GEMV, an outer
// product): its rate is its bytes'.
double smallest_gemm_dimension(const ResolvedEinSum& r) {
  const EinSum& e = r.einsum();
  if (e.arity() != 2) return 0;
  const std::string &x = e.inputs[0], &y = e.inputs[1], &z = e.output;
  double rows = 1, cols = 1, inner = 1;
  bool has_rows = false, has_cols = false, has_inner = false;
  for (char l : r.unique_labels()) {
    const bool in_x = x.find(l) != std::string::npos, in_y = y.find(l) != std::string::npos,
               in_z = z.find(l) != std::string::npos;
    const double n = static_cast<double>(r.extent(l));
    if (in_x && in_z && !in_y) rows *= n, has_rows = true;
    if (in_y && in_z && !in_x) cols *= n, has_cols = true;
    if (in_x && in_y && !in_z) inner *= n, has_inner = true;
  }
  return has_rows && has_cols && has_inner ? std::min({rows, cols, inner}) : 0;
}

// The blocks one rank holds as its steps run, by identity as the engine's BlockCensus counts them: a block
// shared by an operand and its producer is one block, live while anything holds it. Bytes are counted
// exactly (the census) and as the BlockPool allocates them (rounded to a size class), with the high-water
// marks the engine's samples see and the memory estimate (pooled blocks plus the temporaries of the call
// running, then the exchange buffers grown to the largest exchange in each direction).
class HeldBlocks {
 public:
  using Id = std::size_t;
  Id take(Extent elements, std::size_t element) {
    blocks_.push_back({static_cast<std::size_t>(elements) * element,
                       BlockPool<Kokkos::HostSpace>::size_class(static_cast<std::size_t>(elements)) * element, 0});
    hold(blocks_.size() - 1);
    return blocks_.size() - 1;
  }
  void hold(Id id) {
    if (blocks_[id].holders++ == 0) exact_ += blocks_[id].exact, pooled_ += blocks_[id].pooled;
  }
  void drop(Id id) {
    if (--blocks_[id].holders == 0) exact_ -= blocks_[id].exact, pooled_ -= blocks_[id].pooled;
  }
  template <class Map>
  void drop_all(Map& held) {
    for (const auto& entry : held) drop(entry.second);
    held.clear();
  }
  // Where the engine samples its block bytes; `during`: the vertex running (the memory estimate's peak).
  void sample(VertexId during, std::size_t temporaries = 0) {
    peak_ = std::max(peak_, exact_);
    if (pooled_ + temporaries > memory_peak_) memory_peak_ = pooled_ + temporaries, memory_peak_vertex_ = during;
  }
  void grow_buffers(std::size_t send, std::size_t receive) {
    send_buffer_ = std::max(send_buffer_, send);
    receive_buffer_ = std::max(receive_buffer_, receive);
  }
  std::size_t peak() const { return peak_; }
  std::size_t memory_estimate() const { return memory_peak_ + send_buffer_ + receive_buffer_; }
  VertexId memory_peak_vertex() const { return memory_peak_vertex_; }

 private:
  struct Block {
    std::size_t exact, pooled;
    int holders;
  };
  std::vector<Block> blocks_;
  std::size_t exact_ = 0, pooled_ = 0, peak_ = 0, memory_peak_ = 0, send_buffer_ = 0, receive_buffer_ = 0;
  VertexId memory_peak_vertex_ = 0;
};

// A relation's blocks on the rank, by block id: a sorted vector, since a rank holds few blocks of a value and
// takes them mostly in increasing order (a map node per block made the walk allocation-bound).
class BlockIds {
 public:
  using Entry = std::pair<Extent, HeldBlocks::Id>;
  HeldBlocks::Id& operator[](Extent b) {
    auto it = find(b);
    if (it == entries_.end() || it->first != b) it = entries_.insert(it, {b, 0});
    return it->second;
  }
  HeldBlocks::Id at(Extent b) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), b, before);
    if (it == entries_.end() || it->first != b) throw Error("the dry run holds no block " + std::to_string(b));
    return it->second;
  }
  void erase(Extent b) {
    const auto it = find(b);
    if (it != entries_.end() && it->first == b) entries_.erase(it);
  }
  void clear() { entries_.clear(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }

 private:
  static bool before(const Entry& e, Extent b) { return e.first < b; }
  std::vector<Entry>::iterator find(Extent b) {
    if (entries_.empty() || entries_.back().first < b) return entries_.end();
    return std::lower_bound(entries_.begin(), entries_.end(), b, before);
  }
  std::vector<Entry> entries_;
};

// One rank's walk over its steps (execute()'s order and sampling points, docs/engine.md), into `traffic`: the
// rank's figures in its first (only) slot, and per vertex what this rank adds to the sums and maxima.
class RankWalk {
 public:
  RankWalk(const Graph& graph, const Schedule& schedule, const redistribute::ExchangeLimits& limits, CallCosts& costs,
           Traffic& traffic)
      : graph_(graph), schedule_(schedule), limits_(limits), costs_(costs), traffic_(traffic), values_(graph.size()) {}

  void run(const RankSteps& steps) {
    for (const auto& [v, blocks] : steps.inputs) {
      for (Extent b : blocks) values_[v][b] = held_.take(schedule_.layout(v).grid().block_size(b), element(v));
      held_.sample(v);
    }
    for (VertexId v : steps.unread_inputs) held_.drop_all(values_[v]);
    for (const VertexSteps& s : steps.vertices) vertex(s);
    RankTraffic& mine = traffic_.ranks[0];
    mine.peak_block_bytes = held_.peak();
    traffic_.peak_memory_bytes[0] = held_.memory_estimate();
    traffic_.peak_vertex[0] = held_.memory_peak_vertex();
  }

 private:
  std::size_t element(VertexId v) const { return dtype_bytes(graph_.vertex(v).dtype); }

  void vertex(const VertexSteps& s) {
    const VertexId v = s.vertex;
    const VertexWork& work = *s.work;
    RankTraffic& mine = traffic_.ranks[0];
    accessed_ = 0;
    std::vector<BlockIds>& operands = operands_;  // kept from vertex to vertex with their storage
    operands.resize(work.operands.size());
    std::size_t collective_scratch = 0;  // the largest temporaries of a transition by collectives
    for (OperandSource pass : {OperandSource::exchange, OperandSource::collectives}) {
      for (const OperandSteps& op : work.operands) {  // inputs read again are placed with the exchanges
        if (op.source != pass && !(op.source == OperandSource::read && pass == OperandSource::exchange)) continue;
        place_operand(v, op, operands[op.operand]);
        mine.floats_sent += op.floats_sent, mine.floats_received += op.floats_received;
        mine.floats_read += op.floats_read;
        traffic_.floats_moved[v] += op.floats_sent;
        if (pass == OperandSource::collectives)
          collective_scratch = std::max(collective_scratch, reshard_scratch_bytes(v, op.operand));
        else
          held_.grow_buffers(exchange_buffer_bytes(op.floats_sent, element(v), limits_),
                             exchange_buffer_bytes(op.floats_received, element(v), limits_));
      }
      if (pass == OperandSource::exchange) held_.sample(v);
    }
    held_.sample(v, collective_scratch);
    for (VertexId in : s.released) held_.drop_all(values_[in]);
    kernels(s, operands);
    traffic_.busiest_accessed[v] = std::max(traffic_.busiest_accessed[v], accessed_);
    for (BlockIds& blocks : operands) held_.drop_all(blocks);
    reduce(s.vertex, work, s.dead, mine);
  }

  void place_operand(VertexId v, const OperandSteps& op, BlockIds& blocks) {
    const BlockGrid& grid = schedule_.vertex(v).operand_layout(op.operand).grid();
    for (Extent b : op.new_blocks) {
      blocks[b] = held_.take(grid.block_size(b), element(v));
      accessed_ += grid.block_size(b);
    }
    const VertexId producer = graph_.vertex(v).inputs[op.operand];
    for (const auto& [b, from] : op.shared_blocks) {
      blocks[b] = values_[producer].at(from);
      held_.hold(blocks[b]);
      accessed_ += grid.block_size(b);
    }
  }

  std::size_t reshard_scratch_bytes(VertexId v, std::size_t k) const {
    std::size_t bytes = 0;
    for (Extent n : schedule_.transition(v, k).scratch)
      bytes += BlockPool<Kokkos::HostSpace>::size_class(static_cast<std::size_t>(n)) * element(v);
    return bytes;
  }

  // Kernel calls: the streamed blocks a call reads and a new partial block per output block (the first
  // operand's block in place), sampled as they are taken, each call's temporaries while it runs, and the
  // streamed blocks it was the last reader of dropped after it.
  void kernels(const VertexSteps& s, std::vector<BlockIds>& operands) {
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    const VertexWork& work = *s.work;
    const BlockGrid& out = vs.output_layout().grid();
    RankTraffic& mine = traffic_.ranks[0];
    double seconds = 0;
    const std::vector<PricedCall>& priced = prices(s);
    for (std::size_t c = 0; c < work.kernels.size(); ++c) {
      const KernelCall& call = work.kernels[c];
      seconds += priced[c].cost->seconds;
      mine.flops += priced[c].cost->flops;
      for (const auto& [k, b] : call.reads) {
        const Extent n = vs.operand_layout(k).grid().block_size(b);
        operands[k][b] = held_.take(n, element(s.vertex));
        accessed_ += n;
      }
      if (!call.accumulate) {
        accessed_ += out.block_size(call.output_block);
        if (s.in_place) {
          partials_[call.output_block] = operands[0].at(vs.operand_block(0, call.tuple));
          held_.hold(partials_[call.output_block]);
        } else {
          partials_[call.output_block] = held_.take(out.block_size(call.output_block), element(s.vertex));
        }
      }
      if (!call.accumulate || !call.reads.empty()) held_.sample(s.vertex);
      held_.sample(s.vertex, priced[c].scratch);
      for (const auto& [k, b] : call.releases) {
        held_.drop(operands[k].at(b));
        operands[k].erase(b);
      }
    }
    mine.tuples += work.tuples();
    traffic_.vertex_seconds[s.vertex] = std::max(traffic_.vertex_seconds[s.vertex], seconds);
  }

  // Each kernel call's prices and temporaries' bytes (CallCosts), found for the first vertex of a step class
  // and dtype on this rank and kept for the others (one VertexWork: the same schedule object, so the same
  // EinSum and bounds). On uniform grids every call reads blocks of the same bounds: priced once.
  struct PricedCall {
    const CallCosts::Call* cost;
    std::size_t scratch;
  };
  const std::vector<PricedCall>& prices(const VertexSteps& s) {
    const auto [known, fresh] = priced_.try_emplace({s.work.get(), graph_.vertex(s.vertex).dtype});
    if (!fresh) return known->second;
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    const VertexWork& work = *s.work;
    bool uniform = true;
    for (std::size_t k = 0; k < work.operands.size(); ++k) uniform = uniform && vs.operand_layout(k).grid().uniform();
    if (uniform && !work.kernels.empty()) vs.tuple_bounds(work.kernels.front().tuple, bounds_);
    for (const KernelCall& call : work.kernels) {
      if (!uniform) vs.tuple_bounds(call.tuple, bounds_);
      known->second.push_back(
          {&costs_.call(s.vertex, bounds_), costs_.scratch_bytes(s.vertex, bounds_, call.accumulate)});
    }
    return known->second;
  }

  // The reduction: receive blocks for the owned output blocks, sampled, combined and dropped; partials sent.
  void reduce(VertexId v, const VertexWork& s, bool dead, RankTraffic& mine) {
    const BlockGrid& out = schedule_.vertex(v).output_layout().grid();
    std::vector<HeldBlocks::Id> incoming;
    for (const PartialMessage& m : s.receives) {
      const Extent n = out.block_size(m.output_block);
      incoming.push_back(held_.take(n, element(v)));
      mine.floats_received += n;
    }
    if (!s.deferred) held_.sample(v);
    for (HeldBlocks::Id id : incoming) held_.drop(id);
    for (const PartialMessage& m : s.sends) {
      const Extent n = out.block_size(m.output_block);
      mine.floats_sent += n;
      traffic_.floats_moved[v] += n;
      traffic_.partials_moved[v] += n;
      held_.drop(partials_.at(m.output_block));
      partials_.erase(m.output_block);
    }
    values_[v] = std::move(partials_);
    partials_.clear();
    if (dead) held_.drop_all(values_[v]);
  }

  Extent accessed_ = 0;  // elements of the blocks of the vertex being walked (Traffic::busiest_accessed)
  const Graph& graph_;
  const Schedule& schedule_;
  const redistribute::ExchangeLimits& limits_;
  CallCosts& costs_;
  Traffic& traffic_;
  std::vector<Bound> bounds_;  // the call's operand bounds, reused from call to call
  std::map<std::pair<const VertexWork*, Dtype>, std::vector<PricedCall>> priced_;
  HeldBlocks held_;
  std::vector<BlockIds> values_;    // per vertex, its blocks on this rank while it lives
  BlockIds partials_;               // the running vertex's partial blocks
  std::vector<BlockIds> operands_;  // the running vertex's operand blocks
};

// Whether two models price a kernel call alike (the fields CallCosts reads).
bool same_call_rates(const MachineModel& a, const MachineModel& b) {
  return a.flops_per_second == b.flops_per_second && a.memory_bytes_per_second == b.memory_bytes_per_second &&
         a.gemm_half_rate_dimension == b.gemm_half_rate_dimension && a.call_seconds == b.call_seconds;
}

}  // namespace

CallCosts::CallCosts(const Graph& graph, const MachineModel& model)
    : graph_(graph),
      model_(model),
      target_{Dtype::f64, 1, Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Kokkos::HostSpace>::accessible,
              kernels::strided_batches<Kokkos::DefaultExecutionSpace>()},
      known_(graph.size()) {}

CallCosts::Call& CallCosts::entry(VertexId v, const std::vector<Bound>& bounds) {
  auto& known = known_[v];
  if (known.last != known.calls.end() && known.last->first == bounds) return known.last->second;
  auto [it, fresh] = known.calls.try_emplace(bounds);
  known.last = it;
  if (!fresh) return it->second;
  const Vertex& vertex = graph_.vertex(v);
  const ResolvedEinSum r = resolve(vertex.resolved->einsum(), bounds);
  double elements = static_cast<double>(num_elements(r.output_bound()));
  for (const Bound& b : bounds) elements += static_cast<double>(num_elements(b));
  // The model's time for the call (MachineModel): the longer of its flops (2 per join result of a binary call
  // that aggregates, one otherwise) and its blocks' bytes at the memory rate, plus the call's own cost. A
  // contraction's flop rate falls with its smallest GEMM dimension d, as d / (d + gemm_half_rate_dimension).
  Call& c = it->second;
  c.flops = call_flops(r, bounds.size());
  const double d = smallest_gemm_dimension(r);
  const double rate =
      d > 0 ? model_.flops_per_second * d / (d + model_.gemm_half_rate_dimension) : model_.flops_per_second;
  c.seconds = std::max(c.flops / rate,
                       elements * static_cast<double>(dtype_bytes(vertex.dtype)) / model_.memory_bytes_per_second) +
              model_.call_seconds;
  return c;
}

const CallCosts::Call& CallCosts::call(VertexId v, const std::vector<Bound>& bounds) { return entry(v, bounds); }

std::size_t CallCosts::scratch_bytes(VertexId v, const std::vector<Bound>& bounds, bool accumulate) {
  Call& c = entry(v, bounds);
  std::optional<std::size_t>& bytes = c.scratch[accumulate ? 1 : 0];
  if (!bytes) {
    const Vertex& vertex = graph_.vertex(v);
    kernels::KernelTarget target = target_;
    target.dtype = vertex.dtype;
    bytes = 0;
    for (Extent n : kernels::einsum_scratch(resolve(vertex.resolved->einsum(), bounds), accumulate, target))
      *bytes += BlockPool<Kokkos::HostSpace>::size_class(static_cast<std::size_t>(n)) * dtype_bytes(vertex.dtype);
  }
  return *bytes;
}

namespace {

// `costs` where it prices this graph by the schedule's model, else `own` made for them.
CallCosts& call_costs(const Graph& graph, const Schedule& schedule, CallCosts* costs, std::optional<CallCosts>& own) {
  if (!costs || &costs->graph() != &graph || !same_call_rates(costs->model(), schedule.model()))
    return own.emplace(graph, schedule.model());
  return *costs;
}

}  // namespace

std::optional<double> estimated_seconds(const Graph& graph, const Schedule& schedule, CallCosts* given) {
  std::optional<CallCosts> own;
  CallCosts& costs = call_costs(graph, schedule, given, own);
  double sum = 0;  // as Traffic::estimated_seconds adds the vertices, each as dry_run finds it
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input()) continue;
    const VertexSchedule& vs = schedule.vertex(v);
    if (vs.sparse() || vs.on_partials()) return std::nullopt;
    for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k)
      if (!vs.operand_layout(k).grid().uniform()) return std::nullopt;
    const double call = costs.call(v, vs.tuple_bounds(0)).seconds;
    const Extent busiest = (vs.num_tuples() + vs.ranks() - 1) / vs.ranks();
    double seconds = 0;  // the busiest rank's calls, added one by one as its walk does
    for (Extent n = 0; n < busiest; ++n) seconds += call;
    sum += seconds + schedule.communication_seconds(v);
  }
  return sum;
}

Extent failure_agreements(const Graph& graph, const Schedule& schedule) {
  Extent n = 1;  // the inputs and steps checked
  Extent vertices = 0;
  for (VertexId v = 0; v < graph.size(); ++v) vertices += !graph.vertex(v).is_input();
  // Each vertex's operands placed, its kernels' failures held for the next vertex's; one at the end for the last.
  n += vertices + (vertices > 0);
  schedule.for_each_collective_transition(
      [&](VertexId, std::size_t, const Transition& t) { n += static_cast<Extent>(t.plan->steps.size()); });
  return n;
}

Traffic dry_run(const Graph& graph, const Schedule& schedule, const redistribute::ExchangeLimits& limits,
                CallCosts* given, RankClasses grouping) {
  std::optional<CallCosts> own;
  CallCosts* costs = &call_costs(graph, schedule, given, own);
  const int R = schedule.ranks();
  auto zeros = [&](std::size_t ranks) {
    return Traffic{std::vector<RankTraffic>(ranks),       std::vector<Extent>(graph.size(), 0),
                   std::vector<Extent>(graph.size(), 0),  std::vector<Extent>(graph.size(), 0),
                   std::vector<std::size_t>(ranks, 0),    std::vector<VertexId>(ranks, 0),
                   std::vector<double>(graph.size(), 0.0)};
  };
  Traffic traffic = zeros(static_cast<std::size_t>(R));
  // Ranks whose parts have equal walk keys walk alike (StepLists::walk_key): each class of ranks is walked once, on
  // its first rank, and counted for all of them. Idle ranks (R > p) are one class; at p = R, where every rank names
  // blocks of its own, the ranks of a block partition fall in a few classes (more where a grid's blocks differ).
  const StepLists lists(graph, schedule);
  std::vector<RankParts> classes;
  std::vector<int> first_rank;
  std::vector<std::vector<int>> members;
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash;
  std::vector<std::vector<Extent>> keys;  // per class, its walk key
  RankParts parts;                        // each rank's, its storage reused until a class keeps it
  for (int r = 0; r < R; ++r) {
    lists.parts(r, parts);
    std::vector<Extent> key = lists.walk_key(parts);
    std::size_t hash = key.size();
    for (Extent x : key) hash = hash * 1000003u ^ static_cast<std::size_t>(x);
    std::vector<std::size_t>& candidates = by_hash[hash];
    const auto same = std::find_if(candidates.begin(), candidates.end(), [&](std::size_t c) { return keys[c] == key; });
    if (grouping == RankClasses::by_walk_key && same != candidates.end()) {
      members[*same].push_back(r);
      continue;
    }
    candidates.push_back(classes.size());
    classes.push_back(std::move(parts));
    parts = {};
    keys.push_back(std::move(key));
    first_rank.push_back(r);
    members.push_back({r});
  }
  Traffic one = zeros(1);  // one walk's figures, cleared for each: allocating them anew costs more than a walk
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (c > 0) {
      one.ranks[0] = {}, one.peak_memory_bytes[0] = 0, one.peak_vertex[0] = 0;
      for (std::vector<Extent>* sums : {&one.floats_moved, &one.partials_moved, &one.busiest_accessed})
        std::fill(sums->begin(), sums->end(), 0);
      std::fill(one.vertex_seconds.begin(), one.vertex_seconds.end(), 0.0);
    }
    RankWalk(graph, schedule, limits, *costs, one).run(lists.steps(classes[c], first_rank[c]));
    const Extent n = static_cast<Extent>(members[c].size());
    for (int r : members[c]) {
      traffic.ranks[static_cast<std::size_t>(r)] = one.ranks[0];
      traffic.peak_memory_bytes[static_cast<std::size_t>(r)] = one.peak_memory_bytes[0];
      traffic.peak_vertex[static_cast<std::size_t>(r)] = one.peak_vertex[0];
    }
    for (VertexId v = 0; v < graph.size(); ++v) {
      traffic.floats_moved[v] += n * one.floats_moved[v];
      traffic.partials_moved[v] += n * one.partials_moved[v];
      traffic.busiest_accessed[v] = std::max(traffic.busiest_accessed[v], one.busiest_accessed[v]);
      traffic.vertex_seconds[v] = std::max(traffic.vertex_seconds[v], one.vertex_seconds[v]);
    }
  }
  for (VertexId v = 0; v < graph.size(); ++v)
    if (!graph.vertex(v).is_input()) traffic.vertex_seconds[v] += schedule.communication_seconds(v);
  traffic.failure_agreements = failure_agreements(graph, schedule);
  traffic.agreement_seconds =
      static_cast<double>(traffic.failure_agreements) * schedule.model().agreement_seconds(schedule.ranks());
  return traffic;
}

}  // namespace einrel::engine
