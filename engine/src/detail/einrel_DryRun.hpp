#ifndef EINREL_DRYRUN_HPP
#define EINREL_DRYRUN_HPP

#include <einrel_Graph.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_MachineModel.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Traffic.hpp>

#include <map>
#include <optional>
#include <vector>

namespace einrel::engine {

// The engine's dry run (docs/engine.md): what execute() will measure on each of the schedule's ranks,
// from the schedule alone — no data, no MPI, any number of ranks. It follows the engine's steps per
// vertex: operand copies allocated (a block that stays on its rank with the same cut is shared, not
// copied), exchanges, producers released after their last reader, one partial block per output block
// per rank (later tuples of that block accumulate into it), operands released, receive blocks for the partials of the
// owned output blocks, partials sent to their owners released. The block bytes are sampled after every allocation, as
// the engine does.
// With it, the estimate of each rank's allocated memory at its peak (Traffic::peak_memory_bytes): the same
// walk plus the kernel temporaries of each tuple and the exchange buffers under `limits`.
// What the dry run learns of each vertex's kernel calls from their operand bounds: the model's seconds and
// the flops of a call, and the bytes of its kernel temporaries (kernels::einsum_scratch on the default
// execution space counted as one thread, each rounded to its pool size class). Calls on equal bounds are
// priced once for every rank and, where one CallCosts is handed to the dry runs of several plans of a graph
// (the planner's candidates), once for all of them.
class CallCosts {
 public:
  struct Call {
    double seconds = 0, flops = 0;
    std::optional<std::size_t> scratch[2];  // without and with accumulate, once asked for
  };
  CallCosts(const Graph& graph, const MachineModel& model);
  const Call& call(VertexId v, const std::vector<Bound>& bounds);
  std::size_t scratch_bytes(VertexId v, const std::vector<Bound>& bounds, bool accumulate);
  const Graph& graph() const { return graph_; }
  const MachineModel& model() const { return model_; }

 private:
  Call& entry(VertexId v, const std::vector<Bound>& bounds);
  struct Known {
    std::map<std::vector<Bound>, Call> calls;
    std::map<std::vector<Bound>, Call>::iterator last = calls.end();  // most calls repeat the last bounds
  };
  const Graph& graph_;
  MachineModel model_;
  kernels::KernelTarget target_;
  std::vector<Known> known_;
};

// How the dry run groups the ranks it walks once for all: by StepLists::walk_key, or not at all (every rank walked,
// what the classes are checked against).
enum class RankClasses { by_walk_key, none };

// `costs`, where given for this graph and priced by the schedule's machine model, keeps what it learns for
// later dry runs; otherwise the dry run uses its own.
Traffic dry_run(const Graph& graph, const Schedule& schedule, const redistribute::ExchangeLimits& limits = {},
                CallCosts* costs = nullptr, RankClasses classes = RankClasses::by_walk_key);

// The agreements on failure one execution of the schedule makes (execute; docs/engine.md "Failures"): one for
// its checks of inputs and steps, one per EinSum vertex, one at the end (for the last vertex's kernels and
// reduction), and one per step of each collective sequence (Traffic::failure_agreements).
Extent failure_agreements(const Graph& graph, const Schedule& schedule);

// The dry run's estimated makespan (Traffic::estimated_seconds), to the bit, without walking a rank, where every
// EinSum vertex's kernel calls are alike: dense, not on partials, its operand grids' blocks of one extent. The
// busiest rank then runs ceil(J/R) of the J join tuples. Nothing where some vertex is otherwise. The planner costs
// every candidate by it and dry-runs only those that may win.
std::optional<double> estimated_seconds(const Graph& graph, const Schedule& schedule, CallCosts* costs = nullptr);

}  // namespace einrel::engine

#endif
