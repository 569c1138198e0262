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

RankSteps rank_steps(const Graph& graph, const Schedule& schedule, int rank) {
  if (rank < 0 || rank >= schedule.ranks())
    throw Error("rank " + std::to_string(rank) + " is not one of the schedule's " + std::to_string(schedule.ranks()));
  RankSteps steps;
  steps.rank = rank;
  for (VertexId v = 0; v < graph.size(); ++v)
    if (graph.vertex(v).is_input())
      steps.inputs.emplace_back(v, schedule.streamed(v) ? std::vector<Extent>{} : schedule.layout(v).blocks_of(rank));
  steps.unread_inputs = schedule.unread_inputs();
  std::vector<std::shared_ptr<const VertexWork>> work(schedule.num_step_classes());  // by step class
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    std::shared_ptr<const VertexWork>& known = work[schedule.step_class(v)];
    if (!known) {
      auto w = std::make_shared<VertexWork>();
      for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
        w->operands.push_back(operand_steps(graph, schedule, v, k, rank));
      w->deferred = schedule.deferred(v);
      kernel_and_reduction_steps(schedule, v, rank, *w);
      known = std::move(w);
    }
    steps.vertices.push_back({v, known, schedule.released(v), schedule.in_place(v), schedule.dead(v)});
  }
  return steps;
}

}  // namespace einrel::engine
