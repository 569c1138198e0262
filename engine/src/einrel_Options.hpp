#ifndef EINREL_OPTIONS_HPP
#define EINREL_OPTIONS_HPP

#include <einrel_CostModel.hpp>
#include <einrel_Graph.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Transition.hpp>

#include <climits>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace einrel::engine {

// What the engine's planning minimises over its candidate plans, each costed by its dry run on the ranks
// it will run on (docs/planner.md "The objective"): the estimated makespan (Traffic::estimated_seconds
// under Options::machine), or the floats moved between ranks (the paper's objective, counted exactly);
// or `model`: the planner's own decomposable cost model alone, with no dry run (what its dynamic program
// minimises; for checking it against an exhaustive search).
enum class Objective { makespan, floats, model };
std::string_view objective_name(Objective objective);  // "makespan", "floats", "model"
// Throws Error naming the accepted words.
Objective parse_objective(const std::string& text);

// How a graph is planned and run: the one set of options of the pipeline (Session) that `einrel run`,
// `einrel train`, `einrel matrix-chain` and einrel::Program share. Each field is a command-line option of
// `einrel run` (docs/cli.md), named in the comment.
struct Options {
  std::optional<Extent> procs;        // --procs: p; default partition::procs_for_ranks(ranks)
  std::string planner = "eindecomp";  // --planner: one of partition::planner_names()
  partition::CostModel cost_model = partition::CostModel::engine;  // --cost-model
  Objective objective = Objective::makespan;                       // --objective
  // --order planned|graph: whether the planner weighs other orders of the graph's n-ary einsums with the
  // partitions (makespan objective only; docs/planner.md "Contraction order") or keeps the graph's (fewest flops).
  bool plan_order = true;
  MachineModel machine;  // --machine FILE (einrel calibrate), --ranks-per-node N (machine.ranks_per_node)
  TransitionPolicy transitions = TransitionPolicy::automatic;  // --transitions
  std::optional<std::size_t> memory_limit;  // --memory-limit: bytes per rank the plan must fit (choose_plan)
  // --screen EPS: block products of operand norms below EPS are skipped and result blocks whose norm bound is
  // below it dropped (docs/sparse.md "Screening by norms"); 0: none.
  double screen = 0;
  std::size_t comm_buffer_limit = 0;  // --comm-buffer-limit: bytes of send + receive buffers per round (0: no cap)
  // The most elements one MPI message holds: a larger exchange piece, partial block, synthesized collective's
  // call or gather of the caller's boxes goes as several (MPI counts are int). Tests lower it to run that path on
  // small data.
  Extent max_message_elements = INT_MAX;
  InputReads input_reads = InputReads::move;  // `einrel run` and `matrix-chain`: again
  bool warm_memory = true;  // --no-warm-memory turns it off: take every block before the first execution (warm_memory)
  // Called on every rank after each EinSum vertex with its id and the seconds since the execution began
  // (--progress).
  std::function<void(VertexId, double)> on_vertex_done;

  // The model a schedule chooses its transitions and input reads by: the machine, where re-reading an input
  // costs no time under the floats objective (it moves nothing between ranks).
  MachineModel scheduling_model() const {
    MachineModel model = machine;
    if (objective == Objective::floats) model.file_seconds_per_byte = 0;
    return model;
  }

  redistribute::ExchangeLimits exchange_limits() const {
    redistribute::ExchangeLimits limits;
    limits.buffer_bytes = comm_buffer_limit;
    limits.max_message_elements = max_message_elements;
    return limits;
  }
};

}  // namespace einrel::engine

#endif
