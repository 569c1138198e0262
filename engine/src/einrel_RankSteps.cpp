#include <einrel_Error.hpp>
#include <einrel_RankSteps.hpp>

#include <algorithm>
#include <map>

namespace einrel::engine {
namespace {

using redistribute::BlockLayout;

// What parts() lists blocks, tuples and ranks into, kept from vertex to vertex with its storage.
struct Scratch {
  std::vector<Extent> blocks, tuples;
  std::vector<int> ranks;
};

// Operand k of EinSum vertex v on `rank`, into `op` (its storage reused): where its blocks come from and what the
// rank moves for them.
// `same_cut`: whether the producer's layout and the operand's have one grid (StepLists finds it once per step class).
void operand_steps(const Graph& graph, const Schedule& schedule, VertexId v, std::size_t k, bool same_cut, int rank,
                   OperandSteps& op, Scratch& scratch) {
  const VertexSchedule& vs = schedule.vertex(v);
  const VertexId producer = graph.vertex(v).inputs[k];
  op.operand = k;
  op.source = OperandSource::exchange;
  op.same_as = 0;
  op.new_blocks.clear(), op.shared_blocks.clear();
  op.floats_sent = op.floats_received = op.floats_read = 0;
  if (const auto same = schedule.shared_operand(v, k)) {
    op.source = OperandSource::same_as;
    op.same_as = *same;
    return;
  }
  if (schedule.streamed(producer)) {
    op.source = OperandSource::stream;
    return;
  }
  const BlockLayout &from = schedule.layout(producer), &to = vs.operand_layout(k);
  // A block that stays on its rank with the same cut is shared with the producer; the others are new.
  auto shared_or_new = [&](Extent b) {
    if (same_cut && from.placement().holds(rank, b))
      op.shared_blocks.emplace_back(b, b);
    else
      op.new_blocks.push_back(b);
  };
  if (schedule.reads_again(v, k)) {
    op.source = OperandSource::read;
    to.placement().blocks_of(rank, scratch.blocks);
    for (Extent b : scratch.blocks) shared_or_new(b);
    for (Extent b : op.new_blocks) op.floats_read += to.grid().block_size(b);
    return;
  }
  const Transition& transition = schedule.transition(v, k);
  op.floats_sent = transition.volumes.sent[static_cast<std::size_t>(rank)];
  op.floats_received = transition.volumes.received[static_cast<std::size_t>(rank)];
  if (transition.path == TransitionPath::collectives) {
    op.source = OperandSource::collectives;
    const auto [tile, source_tile] = collective_tiles(transition, rank);
    if (keeps_source_tile(transition, rank))
      op.shared_blocks.emplace_back(tile, source_tile);
    else
      op.new_blocks.push_back(tile);
    return;
  }
  to.placement().blocks_of(rank, scratch.blocks);
  for (Extent b : scratch.blocks) shared_or_new(b);
}

// Each streamed operand block read before the first of this rank's calls that reads it and released after
// the last.
void stream_steps(const VertexSchedule& vs, VertexWork& steps) {
  for (const OperandSteps& op : steps.operands) {
    if (op.source != OperandSource::stream) continue;
    std::map<Extent, std::size_t> last;  // block -> its last call
    for (std::size_t c = 0; c < steps.kernels.size(); ++c) {
      const Extent b = vs.operand_block(op.operand, steps.kernels[c].tuple);
      if (last.emplace(b, c).second)
        steps.kernels[c].reads.emplace_back(op.operand, b);
      else
        last[b] = c;
    }
    for (const auto& [b, c] : last) steps.kernels[c].releases.emplace_back(op.operand, b);
  }
}

// The kernel calls and reduction messages of EinSum vertex v on `rank`, into `steps` (its storage reused).
void kernel_and_reduction_steps(const Schedule& schedule, VertexId v, int rank, VertexWork& steps, Scratch& scratch) {
  const VertexSchedule& vs = schedule.vertex(v);
  vs.tuples_of(rank, scratch.tuples);
  steps.kernels.resize(scratch.tuples.size());
  for (std::size_t c = 0; c < scratch.tuples.size(); ++c) {
    KernelCall& call = steps.kernels[c];
    call.tuple = scratch.tuples[c];
    call.output_block = vs.output_block(call.tuple);
    call.accumulate = c > 0 && steps.kernels[c - 1].output_block == call.output_block;
    call.reads.clear(), call.releases.clear();
  }
  stream_steps(vs, steps);
  steps.receives.clear(), steps.sends.clear();
  if (steps.deferred) return;
  vs.output_layout().placement().blocks_of(rank, scratch.blocks);
  for (Extent g : scratch.blocks) {
    vs.contributors(g, scratch.ranks);
    for (std::size_t i = 1; i < scratch.ranks.size(); ++i) steps.receives.push_back({g, scratch.ranks[i]});
  }
  for (const KernelCall& call : steps.kernels) {
    if (call.accumulate) continue;
    const int owner = vs.tuple_rank(vs.first_tuple(call.output_block));
    if (owner != rank) steps.sends.push_back({call.output_block, owner});
  }
}

}  // namespace

const redistribute::RedistributionPlan& exchange_plan(const OperandSteps& op, const redistribute::BlockLayout& from,
                                                      const redistribute::BlockLayout& to, int rank,
                                                      std::size_t element_bytes,
                                                      const redistribute::ExchangeLimits& limits) {
  const redistribute::RedistributionPlan* kept = op.exchange.get();
  if (!kept || kept->rank() != rank || kept->element_bytes() != element_bytes || !(kept->limits() == limits) ||
      !(kept->from_grid() == from.grid()) || !(kept->to_grid() == to.grid()) || kept->num_ranks() != from.num_ranks())
    op.exchange = std::make_shared<const redistribute::RedistributionPlan>(from, to, rank, element_bytes, limits);
  return *op.exchange;
}

bool operator==(const OperandSteps& a, const OperandSteps& b) {
  return a.operand == b.operand && a.source == b.source && a.same_as == b.same_as && a.new_blocks == b.new_blocks &&
         a.shared_blocks == b.shared_blocks && a.floats_sent == b.floats_sent &&
         a.floats_received == b.floats_received && a.floats_read == b.floats_read;
}

bool operator==(const KernelCall& a, const KernelCall& b) {
  return a.tuple == b.tuple && a.output_block == b.output_block && a.accumulate == b.accumulate && a.reads == b.reads &&
         a.releases == b.releases;
}

bool operator==(const PartialMessage& a, const PartialMessage& b) {
  return a.output_block == b.output_block && a.peer == b.peer;
}

bool operator==(const VertexWork& a, const VertexWork& b) {
  return a.operands == b.operands && a.kernels == b.kernels && a.deferred == b.deferred && a.receives == b.receives &&
         a.sends == b.sends;
}

bool operator==(const RankParts& a, const RankParts& b) {
  if (a.input_blocks != b.input_blocks || a.work.size() != b.work.size()) return false;
  for (std::size_t c = 0; c < a.work.size(); ++c)
    if (a.work[c] != b.work[c] && !(*a.work[c] == *b.work[c])) return false;
  return true;
}

std::vector<Extent> StepLists::walk_key(const RankParts& parts) const {
  std::vector<Extent> key;
  // A block's elements, where its grid's blocks differ (of a uniform grid, every rank's are the same).
  auto size = [&key](const BlockGrid& grid, Extent b) {
    if (!grid.uniform()) key.push_back(grid.block_size(b));
  };
  for (std::size_t i = 0; i < parts.input_blocks.size(); ++i) {
    const BlockGrid& grid = schedule_.layout(layout_input_[i]).grid();
    key.push_back(static_cast<Extent>(parts.input_blocks[i].size()));
    for (Extent b : parts.input_blocks[i]) size(grid, b);
  }
  std::vector<std::vector<Extent>> shared;  // per operand, the producer blocks it shares, sorted
  Bound bound;
  for (std::size_t c = 0; c < parts.work.size(); ++c) {
    const VertexWork& w = *parts.work[c];
    const VertexSchedule& vs = schedule_.vertex(class_vertex_[c]);
    shared.assign(w.operands.size(), {});
    for (std::size_t k = 0; k < w.operands.size(); ++k) {
      const OperandSteps& op = w.operands[k];
      const BlockGrid& grid = vs.operand_layout(op.operand).grid();
      key.insert(key.end(), {static_cast<Extent>(op.source), static_cast<Extent>(op.same_as),
                             static_cast<Extent>(op.new_blocks.size()), static_cast<Extent>(op.shared_blocks.size()),
                             op.floats_sent, op.floats_received, op.floats_read});
      for (Extent b : op.new_blocks) size(grid, b);
      for (const auto& [b, from] : op.shared_blocks) size(grid, b);
      // Two operands of one producer may share one of its blocks or two: the bytes its release leaves held differ,
      // so the key counts the blocks each operand shares with each earlier one, and their sizes (of another
      // producer, a count that changes nothing, at worst a class more).
      for (const auto& [b, from] : op.shared_blocks) shared[k].push_back(from);
      std::sort(shared[k].begin(), shared[k].end());
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t before = key.size();
        key.push_back(0);
        std::vector<Extent> sizes;
        for (auto x = shared[j].begin(), y = shared[k].begin(); x != shared[j].end() && y != shared[k].end();)
          if (*x < *y) {
            ++x;
          } else if (*y < *x) {
            ++y;
          } else {
            ++key[before];
            if (!grid.uniform()) sizes.push_back(grid.block_size(*y));
            ++x, ++y;
          }
        std::sort(sizes.begin(), sizes.end());
        key.insert(key.end(), sizes.begin(), sizes.end());
      }
    }
    // The calls: their pattern, the blocks they read, release and start, and the bounds they are priced by.
    const BlockGrid& out = vs.output_layout().grid();
    key.push_back(w.tuples());
    for (const KernelCall& call : w.kernels) {
      key.insert(key.end(),
                 {call.accumulate, static_cast<Extent>(call.reads.size()), static_cast<Extent>(call.releases.size())});
      for (const auto& [k, b] : call.reads) key.push_back(static_cast<Extent>(k)), size(vs.operand_layout(k).grid(), b);
      for (const auto& [k, b] : call.releases)
        key.push_back(static_cast<Extent>(k)), size(vs.operand_layout(k).grid(), b);
      if (!call.accumulate) size(out, call.output_block);
      for (std::size_t k = 0; k < w.operands.size(); ++k) {
        const BlockGrid& grid = vs.operand_layout(k).grid();
        if (grid.uniform()) continue;
        grid.block_bound(vs.operand_block(k, call.tuple), bound);
        key.insert(key.end(), bound.begin(), bound.end());
      }
    }
    key.insert(key.end(), {w.deferred, static_cast<Extent>(w.receives.size()), static_cast<Extent>(w.sends.size())});
    for (const PartialMessage& m : w.receives) size(out, m.output_block);
    for (const PartialMessage& m : w.sends) size(out, m.output_block);
  }
  return key;
}

StepLists::StepLists(const Graph& graph, const Schedule& schedule)
    : graph_(graph), schedule_(schedule), input_layout_(graph.size(), 0), class_vertex_(schedule.num_step_classes()) {
  for (VertexId v = graph.size(); v-- > 0;)
    if (!graph.vertex(v).is_input()) class_vertex_[schedule.step_class(v)] = v;
  for (VertexId v : class_vertex_) {
    std::vector<bool>& same = same_cut_.emplace_back();
    for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k)
      same.push_back(schedule.layout(graph.vertex(v).inputs[k]).grid() == schedule.vertex(v).operand_layout(k).grid());
  }
  std::map<const BlockLayout*, std::size_t> index;
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (!graph.vertex(v).is_input() || schedule.streamed(v)) continue;
    const auto [known, fresh] = index.try_emplace(&schedule.layout(v), layout_input_.size());
    if (fresh) layout_input_.push_back(v);
    input_layout_[v] = known->second;
  }
}

RankParts StepLists::parts(int rank) const {
  RankParts parts;
  this->parts(rank, parts);
  return parts;
}

void StepLists::parts(int rank, RankParts& parts) const {
  if (rank < 0 || rank >= schedule_.ranks())
    throw Error("rank " + std::to_string(rank) + " is not one of the schedule's " + std::to_string(schedule_.ranks()));
  Scratch scratch;
  parts.input_blocks.resize(layout_input_.size());
  for (std::size_t i = 0; i < layout_input_.size(); ++i)
    schedule_.layout(layout_input_[i]).placement().blocks_of(rank, parts.input_blocks[i]);
  parts.work.resize(class_vertex_.size());
  for (std::size_t c = 0; c < class_vertex_.size(); ++c) {
    const VertexId v = class_vertex_[c];
    std::shared_ptr<VertexWork>& w = parts.work[c];
    if (!w || w.use_count() > 1) w = std::make_shared<VertexWork>();  // else its storage is reused
    const std::size_t n = graph_.vertex(v).inputs.size();
    w->operands.resize(n);
    for (std::size_t k = 0; k < n; ++k)
      operand_steps(graph_, schedule_, v, k, same_cut_[c][k], rank, w->operands[k], scratch);
    w->deferred = schedule_.deferred(v);
    kernel_and_reduction_steps(schedule_, v, rank, *w, scratch);
  }
}

RankSteps StepLists::steps(const RankParts& parts, int rank) const {
  RankSteps steps;
  steps.rank = rank;
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (graph_.vertex(v).is_input())
      steps.inputs.emplace_back(v,
                                schedule_.streamed(v) ? std::vector<Extent>{} : parts.input_blocks[input_layout_[v]]);
  steps.unread_inputs = schedule_.unread_inputs();
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (!graph_.vertex(v).is_input())
      steps.vertices.push_back(
          {v, parts.work[schedule_.step_class(v)], schedule_.released(v), schedule_.in_place(v), schedule_.dead(v)});
  return steps;
}

RankSteps rank_steps(const Graph& graph, const Schedule& schedule, int rank) {
  const StepLists lists(graph, schedule);
  return lists.steps(lists.parts(rank), rank);
}

}  // namespace einrel::engine
