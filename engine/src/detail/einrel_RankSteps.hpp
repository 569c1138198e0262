#ifndef EINREL_RANKSTEPS_HPP
#define EINREL_RANKSTEPS_HPP

#include <einrel_Graph.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Schedule.hpp>

#include <memory>
#include <utility>
#include <vector>

namespace einrel::engine {

// What one rank does when it executes a schedule, in order (docs/engine.md, "The step list").
// Computed from the schedule and the rank alone (no data, no MPI, any number of ranks), once, here: which
// operand blocks a rank takes new and which it shares with their producer, which copy of an operand serves
// another, which values die after which vertex, when a kernel call starts a partial block and when it
// accumulates, in-place vertices, deferred reductions, and the partials a rank receives and sends. Three
// walkers follow it and decide nothing of their own: execute() runs it on data, dry_run() counts its bytes
// and floats for every rank, warm_memory() takes its blocks from the pool.

// How operand k of a vertex reaches this rank's join tuples.
enum class OperandSource {
  exchange,     // point-to-point from the producer's layout (redistribute::Exchange)
  collectives,  // the schedule's synthesized collectives (Schedule::transition)
  same_as,      // the blocks of an earlier operand with the same producer and layout (Schedule::shared_operand)
  read,         // a graph input read again from its source into the operand's layout (Schedule::reads_again)
  stream,       // a streamed graph input: its blocks read and released around the kernel calls (Schedule::streamed)
};

// One operand's blocks on this rank (block ids of VertexSchedule::operand_layout(k)); its producer is the
// vertex's input k.
struct OperandSteps {
  std::size_t operand = 0;
  OperandSource source = OperandSource::exchange;
  std::size_t same_as = 0;         // the earlier operand, for OperandSource::same_as
  std::vector<Extent> new_blocks;  // taken new and filled by the transition (zero where the producer's absent
                                   // blocks lie: redistribute::RedistributionPlan::absent)
  // (operand block, producer block): kept from the producer's blocks on this rank (a block that stays on its
  // rank with the same cut, or the tile a lone allpermute leaves in place).
  std::vector<std::pair<Extent, Extent>> shared_blocks;
  Extent floats_sent = 0, floats_received = 0;  // this rank's share of the transition
  Extent floats_read = 0;                       // read again from the input's source (OperandSource::read)
  // OperandSource::exchange: this rank's plan of it as exchange_plan last made it; not part of the steps.
  mutable std::shared_ptr<const redistribute::RedistributionPlan> exchange;
};

// This rank's exchange plan for `op` (OperandSource::exchange) from `from` to `to`: made the first time the
// step list needs it (warm-up or first execution) and kept in `op`, so that later executions and the other
// vertices of its step class (which share `op`: one transition object, so the same layouts) reuse it rather than
// walk every block and peer again; made anew where the rank, element size, limits or grids differ.
const redistribute::RedistributionPlan& exchange_plan(const OperandSteps& op, const redistribute::BlockLayout& from,
                                                      const redistribute::BlockLayout& to, int rank,
                                                      std::size_t element_bytes,
                                                      const redistribute::ExchangeLimits& limits);

// A block of a streamed operand (OperandSource::stream): (operand, block id of its operand_layout).
using StreamedBlock = std::pair<std::size_t, Extent>;

// One join tuple's kernel call: it starts the partial block of its output block, or accumulates into it
// (a rank's tuples of one output block are consecutive). Blocks of streamed operands are read from their
// source just before the first call on this rank that reads them, and released after the last.
struct KernelCall {
  Extent tuple = 0;
  Extent output_block = 0;
  bool accumulate = false;
  std::vector<StreamedBlock> reads;     // before the call
  std::vector<StreamedBlock> releases;  // after it
};

// A partial result block travelling between this rank and `peer` in a vertex's reduction.
struct PartialMessage {
  Extent output_block = 0;
  int peer = 0;
};

// What an EinSum vertex does on this rank, one object for the vertices of one step class
// (Schedule::step_class): their operands, calls and messages are the same.
struct VertexWork {
  std::vector<OperandSteps> operands;  // in operand order
  std::vector<KernelCall> kernels;
  bool deferred = false;                 // partials stay unreduced (Schedule::deferred): no messages
  std::vector<PartialMessage> receives;  // partials of the output blocks this rank owns, in owner order
  std::vector<PartialMessage> sends;     // this rank's partials of output blocks others own
  Extent tuples() const { return static_cast<Extent>(kernels.size()); }
};

// Equal contents, field by field (RankParts' comparison).
bool operator==(const OperandSteps& a, const OperandSteps& b);
bool operator==(const KernelCall& a, const KernelCall& b);
bool operator==(const PartialMessage& a, const PartialMessage& b);
bool operator==(const VertexWork& a, const VertexWork& b);

// One EinSum vertex on this rank.
struct VertexSteps {
  VertexId vertex = 0;
  std::shared_ptr<const VertexWork> work;
  std::vector<VertexId> released;  // values whose last reader this vertex is: released once operands are placed
  bool in_place = false;           // partial blocks are the first operand's (Schedule::in_place)
  bool dead = false;               // nothing reads the value and it is no output: released at once
};

struct RankSteps {
  int rank = 0;
  // This rank's blocks of every input, loaded before the run (none for a streamed input).
  std::vector<std::pair<VertexId, std::vector<Extent>>> inputs;
  std::vector<VertexId> unread_inputs;  // released before the first vertex
  std::vector<VertexSteps> vertices;    // the EinSum vertices in graph order
};

// What fixes a rank's step list: its blocks of each layout an input lives in, and its work for each step
// class. Ranks with equal parts have equal step lists (but for `rank`).
struct RankParts {
  std::vector<std::vector<Extent>> input_blocks;  // per input layout, in StepLists' order
  std::vector<std::shared_ptr<VertexWork>> work;  // per step class
};
bool operator==(const RankParts& a, const RankParts& b);  // equal contents

// Every rank's step list of one schedule, with what is the same for all ranks found once.
class StepLists {
 public:
  StepLists(const Graph& graph, const Schedule& schedule);
  // Throws Error for a rank outside the schedule's.
  RankParts parts(int rank) const;
  // The same into `parts`, reusing the storage of what it holds alone (the dry run lists every rank's parts).
  void parts(int rank, RankParts& parts) const;
  RankSteps steps(const RankParts& parts, int rank) const;
  // What a walk over a rank's parts depends on: how many blocks it takes, shares, sends and receives in place of
  // which ones, and their elements where a grid's blocks differ; the floats it moves; the pattern of its kernel
  // calls and the operand bounds they are priced by where those differ. Ranks with equal keys walk alike (the same
  // figures), so where every rank names other blocks (p = R) the dry run still walks a few ranks for all of them.
  std::vector<Extent> walk_key(const RankParts& parts) const;

 private:
  const Graph& graph_;
  const Schedule& schedule_;
  std::vector<std::size_t> input_layout_;    // per input vertex (not streamed), the index of its layout object
  std::vector<VertexId> layout_input_;       // per input layout object, the first input living in it
  std::vector<VertexId> class_vertex_;       // per step class, its first vertex
  std::vector<std::vector<bool>> same_cut_;  // per step class and operand, whether it has its producer's grid
};

// StepLists(graph, schedule).steps of `rank`'s parts. Throws Error for a rank outside the schedule's.
RankSteps rank_steps(const Graph& graph, const Schedule& schedule, int rank);

}  // namespace einrel::engine

#endif
