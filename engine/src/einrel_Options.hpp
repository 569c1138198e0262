#ifndef EINREL_OPTIONS_HPP
#define EINREL_OPTIONS_HPP

#include <einrel_CostModel.hpp>
#include <einrel_FailureInjection.hpp>
#include <einrel_Graph.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Transition.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace einrel::engine {

// How a graph is planned and run: the one set of options of the pipeline (Session) that `einrel run`,
// `einrel train`, `einrel matrix-chain` and einrel::Program share. Each field is a command-line option of
// `einrel run` (docs/cli.md), named in the comment.
struct Options {
  std::optional<Extent> procs;        // --procs: p; default partition::procs_for_ranks(ranks)
  std::string planner = "eindecomp";  // --planner: one of partition::planner_names()
  partition::CostModel cost_model = partition::CostModel::engine;  // --cost-model
  TransitionPolicy transitions = TransitionPolicy::automatic;      // --transitions
  std::optional<std::size_t> memory_limit;  // --memory-limit: bytes per rank the plan must fit (plan_within_memory)
  std::size_t comm_buffer_limit = 0;  // --comm-buffer-limit: bytes of send + receive buffers per round (0: no cap)
  bool warm_memory = true;  // --no-warm-memory turns it off: take every block before the first execution (warm_memory)
  // Called on every rank after each EinSum vertex with its id and the seconds since the execution began
  // (--progress).
  std::function<void(VertexId, double)> on_vertex_done;
  std::optional<FailureInjection> failure;  // test-only (EINREL_TEST_INJECT_FAILURE, docs/engine.md)

  redistribute::ExchangeLimits exchange_limits() const {
    redistribute::ExchangeLimits limits;
    limits.buffer_bytes = comm_buffer_limit;
    return limits;
  }
};

}  // namespace einrel::engine

#endif
