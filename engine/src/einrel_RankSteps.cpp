#include <einrel_Error.hpp>
#include <einrel_RankSteps.hpp>

#include <algorithm>
#include <map>

namespace einrel::engine {
namespace {

using redistribute::BlockLayout;

// Operand k of EinSum vertex v on `rank`: where its blocks come from and what the rank moves for them.
OperandSteps operand_steps(const Graph& graph, const Schedule& schedule, VertexId v, std::size_t k, int rank) {
  const VertexSchedule& vs = schedule.vertex(v);
  const VertexId producer = graph.vertex(v).inputs[k];
  OperandSteps op;
  op.operand = k;
  if (const auto same = schedule.shared_operand(v, k)) {
    op.source = OperandSource::same_as;
    op.same_as = *same;
    return op;
  }
  if (schedule.streamed(producer)) {
    op.source = OperandSource::stream;
    return op;
  }
  const BlockLayout &from = schedule.layout(producer), &to = vs.operand_layout(k);
  const bool same_cut = from.grid() == to.grid();
  // A block that stays on its rank with the same cut is shared with the producer; the others are new.
  auto shared_or_new = [&](Extent b) {
    if (same_cut && from.placement().holds(rank, b))
      op.shared_blocks.emplace_back(b, b);
    else
      op.new_blocks.push_back(b);
  };
  if (schedule.reads_again(v, k)) {
    op.source = OperandSource::read;
    for (Extent b : to.blocks_of(rank)) shared_or_new(b);
    for (Extent b : op.new_blocks) op.floats_read += to.grid().block_size(b);
    return op;
  }
  const Transition& transition = schedule.transition(v, k);
  op.floats_sent = transition.volumes.sent[static_cast<std::size_t>(rank)];
  op.floats_received = transition.volumes.received[static_cast<std::size_t>(rank)];
  if (transition.path == TransitionPath::collectives) {
    op.source = OperandSource::collectives;
    const auto [tile, source_tile] = transition.tiles[static_cast<std::size_t>(rank)];
    if (keeps_source_tile(transition, rank))
      op.shared_blocks.emplace_back(tile, source_tile);
    else
      op.new_blocks.push_back(tile);
    return op;
  }
  for (Extent b : to.blocks_of(rank)) shared_or_new(b);
  return op;
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

// The kernel calls and reduction messages of EinSum vertex v on `rank`.
void kernel_and_reduction_steps(const Schedule& schedule, VertexId v, int rank, VertexWork& steps) {
  const VertexSchedule& vs = schedule.vertex(v);
  for (Extent t : vs.tuples_of(rank)) {
    const Extent g = vs.output_block(t);
    steps.kernels.push_back({t, g, !steps.kernels.empty() && steps.kernels.back().output_block == g, {}, {}});
  }
  stream_steps(vs, steps);
  if (steps.deferred) return;
  for (Extent g : vs.output_layout().blocks_of(rank)) {
    const std::vector<int> ranks = vs.contributors(g);
    for (std::size_t i = 1; i < ranks.size(); ++i) steps.receives.push_back({g, ranks[i]});
  }
  for (const KernelCall& call : steps.kernels) {
    if (call.accumulate) continue;
    const int owner = vs.tuple_rank(vs.first_tuple(call.output_block));
    if (owner != rank) steps.sends.push_back({call.output_block, owner});
  }
}

}  // namespace

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

namespace {

void mix(std::size_t& h, std::size_t x) { h = h * 1000003u ^ x; }

}  // namespace

std::size_t RankParts::hash() const {
  std::size_t h = input_blocks.size();
  for (const std::vector<Extent>& blocks : input_blocks) {
    mix(h, blocks.size());
    for (Extent b : blocks) mix(h, static_cast<std::size_t>(b));
  }
  for (const std::shared_ptr<const VertexWork>& w : work) {
    mix(h, w->kernels.size()), mix(h, w->receives.size()), mix(h, w->sends.size());
    for (const OperandSteps& op : w->operands)
      mix(h, op.new_blocks.size()), mix(h, op.shared_blocks.size()), mix(h, static_cast<std::size_t>(op.floats_sent));
    for (const KernelCall& call : w->kernels) mix(h, static_cast<std::size_t>(call.tuple));
    for (const PartialMessage& m : w->sends) mix(h, static_cast<std::size_t>(m.peer));
  }
  return h;
}

bool operator==(const RankParts& a, const RankParts& b) {
  if (a.input_blocks != b.input_blocks || a.work.size() != b.work.size()) return false;
  for (std::size_t c = 0; c < a.work.size(); ++c)
    if (a.work[c] != b.work[c] && !(*a.work[c] == *b.work[c])) return false;
  return true;
}

std::vector<Extent> walk_key(const RankParts& parts) {
  std::vector<Extent> key;
  for (const std::vector<Extent>& blocks : parts.input_blocks) key.push_back(static_cast<Extent>(blocks.size()));
  std::vector<std::vector<Extent>> shared;  // per operand, the producer blocks it shares, sorted
  for (const std::shared_ptr<const VertexWork>& w : parts.work) {
    shared.assign(w->operands.size(), {});
    for (std::size_t k = 0; k < w->operands.size(); ++k) {
      const OperandSteps& op = w->operands[k];
      key.insert(key.end(), {static_cast<Extent>(op.source), static_cast<Extent>(op.same_as),
                             static_cast<Extent>(op.new_blocks.size()), static_cast<Extent>(op.shared_blocks.size()),
                             op.floats_sent, op.floats_received, op.floats_read});
      // Two operands of one producer may share one of its blocks or two: the bytes its release leaves held differ,
      // so the key counts the blocks each operand shares with each earlier one (of another producer, a count that
      // changes nothing, at worst a class more).
      for (const auto& [b, from] : op.shared_blocks) shared[k].push_back(from);
      std::sort(shared[k].begin(), shared[k].end());
      for (std::size_t j = 0; j < k; ++j) {
        Extent common = 0;
        for (auto x = shared[j].begin(), y = shared[k].begin(); x != shared[j].end() && y != shared[k].end();)
          if (*x < *y)
            ++x;
          else if (*y < *x)
            ++y;
          else
            ++common, ++x, ++y;
        key.push_back(common);
      }
    }
    key.push_back(w->tuples());
    for (const KernelCall& call : w->kernels) {
      key.insert(key.end(),
                 {call.accumulate, static_cast<Extent>(call.reads.size()), static_cast<Extent>(call.releases.size())});
      for (const StreamedBlock& b : call.reads) key.push_back(static_cast<Extent>(b.first));
      for (const StreamedBlock& b : call.releases) key.push_back(static_cast<Extent>(b.first));
    }
    key.insert(key.end(), {w->deferred, static_cast<Extent>(w->receives.size()), static_cast<Extent>(w->sends.size())});
  }
  return key;
}

StepLists::StepLists(const Graph& graph, const Schedule& schedule)
    : graph_(graph), schedule_(schedule), input_layout_(graph.size(), 0) {
  for (VertexId v = 0; v < graph.size() && uniform_; ++v) {
    uniform_ = schedule.layout(v).grid().uniform();
    if (graph.vertex(v).is_input()) continue;
    const VertexSchedule& vs = schedule.vertex(v);
    uniform_ = uniform_ && vs.output_layout().grid().uniform();
    for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k)
      uniform_ = uniform_ && vs.operand_layout(k).grid().uniform();
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
  if (rank < 0 || rank >= schedule_.ranks())
    throw Error("rank " + std::to_string(rank) + " is not one of the schedule's " + std::to_string(schedule_.ranks()));
  RankParts parts;
  for (VertexId v : layout_input_) parts.input_blocks.push_back(schedule_.layout(v).blocks_of(rank));
  parts.work.resize(schedule_.num_step_classes());
  for (VertexId v = 0; v < graph_.size(); ++v) {
    const Vertex& vertex = graph_.vertex(v);
    if (vertex.is_input()) continue;
    std::shared_ptr<const VertexWork>& known = parts.work[schedule_.step_class(v)];
    if (known) continue;
    auto w = std::make_shared<VertexWork>();
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
      w->operands.push_back(operand_steps(graph_, schedule_, v, k, rank));
    w->deferred = schedule_.deferred(v);
    kernel_and_reduction_steps(schedule_, v, rank, *w);
    known = std::move(w);
  }
  return parts;
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
