#ifndef EINREL_SCHEDULE_HPP
#define EINREL_SCHEDULE_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>
#include <einrel_Transition.hpp>
#include <einrel_VertexSchedule.hpp>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace einrel::engine {

class ScheduleMemo;
struct TransitionChoices;

// The whole graph's schedule on R ranks: a VertexSchedule per EinSum vertex and where every value lives.
// An input is read straight into the operand layout of its first consumer (each copy read from the
// file by its own site), so that consumer moves nothing for it; a later consumer that reads it in another
// layout moves it from there, or, with InputReads::again, reads it again from its source where the model
// finds that cheaper (reads_again).
class Schedule {
 public:
  // Throws Error unless there is one partition vector per vertex fitting each EinSum, and ranks >= 1.
  // `policy` says how operands may move between layouts (TransitionChooser), by `model`.
  // `carried` pairs (input W, EinSum vertex W'), for graphs executed again with W' fed back as W (a training
  // step, docs/training.md): W lives in W''s output layout, so the value comes back where it is read, and
  // W's readers move it from there like any operand.
  // `screen` > 0 screens block-sparse products by their operands' norm bounds (VertexSchedule).
  // `memo`: what other schedules of this graph on these ranks under this model made, to share (the planner's
  // candidates); throws Error if it was made for another graph, ranks or model.
  Schedule(const Graph& graph, const std::vector<partition::PartitionVector>& partitions, int ranks,
           TransitionPolicy policy = TransitionPolicy::automatic, const MachineModel& model = {},
           const std::vector<std::pair<VertexId, VertexId>>& carried = {}, InputReads reads = InputReads::move,
           double screen = 0, ScheduleMemo* memo = nullptr);

  int ranks() const { return ranks_; }
  const std::vector<partition::PartitionVector>& partitions() const { return partitions_; }
  const VertexSchedule& vertex(VertexId v) const { return *vertices_[v]; }
  // Where the value of vertex v lives: an input's layout, or the output layout of an EinSum vertex.
  const redistribute::BlockLayout& layout(VertexId v) const { return *layouts_[v]; }
  // Lifetimes: the number of operand edges that read v, and whether v is a graph output (kept to the end).
  int uses(VertexId v) const { return uses_[v]; }
  bool kept(VertexId v) const { return kept_[v]; }
  // The values EinSum vertex v is the last reader of (outputs aside), each once: released once v's operands
  // are placed. Whether v's value is dead once computed (nothing reads it, no output); the inputs nothing
  // reads (outputs aside), dead before the first vertex.
  const std::vector<VertexId>& released(VertexId v) const { return released_[v]; }
  bool dead(VertexId v) const { return uses_[v] == 0 && !kept_[v]; }
  std::vector<VertexId> unread_inputs() const;
  // EinSum vertices of one step class take the same steps on every rank (RankSteps' VertexWork), apart from
  // the values they read and release: one VertexSchedule, deferral and, operand by operand, the same source
  // (an earlier operand, a streamed input, or one transition object, which fixes both layouts). A vertex
  // that reads an input again is a class of its own. Classes are numbered from 0 in vertex order.
  std::size_t step_class(VertexId v) const { return step_class_[v]; }
  std::size_t num_step_classes() const { return num_step_classes_; }
  // An earlier operand of v with the same producer and layout as operand k (that operand's blocks serve
  // both), or nothing.
  std::optional<std::size_t> shared_operand(VertexId v, std::size_t k) const;
  // Whether EinSum vertex v writes its result into the blocks of its first operand: v is element-wise
  // (nothing aggregated) with the labels of that operand in the same order, the operand is an
  // intermediate value that dies at v (v reads it once and is its last reader; earlier readers have run),
  // and it already lies in v's layout, which is v's output layout.
  // Then v takes no new blocks and moves nothing for that operand (docs/engine.md).
  bool in_place(VertexId v) const { return in_place_[v]; }
  TransitionPolicy transition_policy() const { return policy_; }
  // Whether operand k of EinSum vertex v, a graph input in another layout than layout(input), is read again
  // from the input's source into operand_layout(k) (InputReads::again): it moves nothing, and costs each
  // rank the floats it reads, at the model's file rate. Carried inputs are always moved.
  bool reads_again(VertexId v, std::size_t k) const { return reads_again_[v][k]; }
  // Whether graph input v is streamed: read from its source block by block by its one reader's kernel calls,
  // held only while they need it, nothing loaded before the run and nothing moved (InputReads::again, one
  // reading edge, no output, not carried; docs/engine.md "Streamed inputs").
  bool streamed(VertexId v) const { return streamed_[v]; }
  // The shape of a block-sparse value (docs/sparse.md): a sparse input's bound shape, or the output shape of
  // a vertex whose sparse_rule keeps its sparse operands' absent blocks; empty for a dense value. Its layout has
  // no site for an absent block.
  const std::optional<BlockShape>& shape(VertexId v) const { return shapes_[v]; }
  const MachineModel& model() const { return model_; }
  // The threshold block products were screened by (0: none), and over every vertex, the block products
  // screened and the result blocks truncated (VertexSchedule).
  double screen() const { return screen_; }
  Extent screened_products() const;
  Extent truncated_blocks() const;
  // The model's time for EinSum vertex v's communication, each part's busiest rank: its operands'
  // transitions and reads, and the reduction of its partial results unless deferred (a deferred one is in
  // its reader's transition).
  double communication_seconds(VertexId v) const { return communication_seconds_[v]; }
  // Their sum: the dry run's estimated makespan adds each vertex's slowest kernel calls to it, so it bounds that
  // estimate from below without a dry run (the planner skips candidates whose bound already loses).
  double communication_seconds() const;
  // How operand k of EinSum vertex v moves from layout(producer) to operand_layout(k): point-to-point or
  // synthesized collectives (docs/engine.md "Transitions"). Throws Error for a shared operand, one read
  // again, or a streamed input.
  const Transition& transition(VertexId v, std::size_t k) const;
  // Whether EinSum vertex v leaves its partial results unreduced, for its one reader's transition by collectives
  // to reduce (layout(v) is then vs.partial_layout()); on_partials: whether an element-wise vertex combines two
  // such vertices' partial blocks where they lie, deferred in turn. The conditions and the model's test are
  // docs/engine.md "Transitions" (deferred reductions, partial values combined as they are).
  bool deferred(VertexId v) const { return deferred_[v]; }
  bool on_partials(VertexId v) const { return vertices_[v] && vertices_[v]->on_partials(); }
  // Calls f(v, k, transition) for every operand moved by collectives, in vertex and operand order.
  template <class F>
  void for_each_collective_transition(F&& f) const {
    for (VertexId v = 0; v < transitions_.size(); ++v)
      for (std::size_t k = 0; k < transitions_[v].size(); ++k)
        if (transitions_[v][k] && transitions_[v][k]->path == TransitionPath::collectives) f(v, k, *transitions_[v][k]);
  }

 private:
  // The transitions of every operand and the vertices whose reduction is deferred, in vertex order (a
  // producer's deferral is decided before its reader's operands).
  void choose_transitions(const Graph& graph, const MachineModel& model, TransitionChoices* shared);
  class TransitionPass;  // choose_transitions' state (einrel_TransitionPass.cpp)
  void assign_step_classes(const Graph& graph);

  int ranks_;
  double screen_ = 0;
  TransitionPolicy policy_;
  std::vector<int> uses_;
  InputReads reads_;
  MachineModel model_;
  std::vector<double> communication_seconds_;
  std::vector<bool> kept_, in_place_, deferred_, carried_, streamed_;
  std::vector<std::vector<bool>> reads_again_;
  std::vector<std::vector<std::shared_ptr<const Transition>>> transitions_;  // null: nothing moves
  std::vector<std::vector<std::optional<std::size_t>>> shared_;
  std::vector<partition::PartitionVector> partitions_;
  std::vector<std::shared_ptr<const VertexSchedule>> vertices_;            // one object for vertices scheduled alike
  std::vector<std::shared_ptr<const redistribute::BlockLayout>> layouts_;  // within schedules where they can be
  std::vector<std::optional<BlockShape>> shapes_;
  std::vector<std::vector<VertexId>> released_;
  std::vector<std::size_t> step_class_;
  std::size_t num_step_classes_ = 0;
};

// Per vertex, whether a schedule with `reads` streams it (Schedule::streamed): with InputReads::again, the graph
// inputs read by one operand edge that are no graph output and not carried (the passes of a sliced vertex count
// as one edge, each streaming what its chunk reads).
std::vector<bool> streamed_inputs(const Graph& graph, InputReads reads,
                                  const std::vector<std::pair<VertexId, VertexId>>& carried);

}  // namespace einrel::engine

#endif
