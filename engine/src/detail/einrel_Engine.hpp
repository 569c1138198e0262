#ifndef EINREL_ENGINE_HPP
#define EINREL_ENGINE_HPP

#include <einrel_Communicator.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_Exchange.hpp>
#include <einrel_Graph.hpp>
#include <einrel_Options.hpp>
#include <einrel_PipelineOptions.hpp>
#include <einrel_RankSteps.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_StepRunner.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace einrel::engine {

// Collective over exchange.comm(): evaluates `graph` on its ranks as `schedule` (planned for that many ranks)
// says (docs/engine.md), by running `steps`, this rank's step list (rank_steps(graph, schedule, rank), which a
// caller that executes again keeps, as Session does). `inputs` holds,
// for every input vertex that is not streamed, this rank's blocks in schedule.layout(input) (other entries
// empty or ignored); `read` fills the operands the schedule reads again from an input's source and the
// blocks of streamed inputs (needed only if it has any). Per EinSum
// vertex: (1) each operand is placed at the sites of its join tuples (exchanged, moved by collectives, or
// shared with its producer where a block stays), and producers are released after their last reader; (2)
// every kernel call runs, accumulating into one partial block per output block (in place: the first
// operand's blocks); (3) partials move to the owner of their output block, which ⊕-combines them in rank
// order, unless the reduction is deferred; the output stays distributed. An exception on any rank in any
// phase (including an injected one) is thrown on every rank with the same message.
//
// Every exchange runs on `exchange`, whose buffers are reused across vertices and calls; blocks come from
// the memory space's BlockPool, so a caller that executes the same schedule again with a kept exchange
// allocates nothing after the first call (or none at all after warm_memory).
template <class ExecutionSpace>
EngineResult<typename ExecutionSpace::memory_space> execute(
    const ExecutionSpace& exec, redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange,
    const Graph& graph, const Schedule& schedule, const RankSteps& steps,
    std::vector<std::optional<AnyDistributed<typename ExecutionSpace::memory_space>>> inputs,
    const PipelineOptions& options = {}, const InputReader<typename ExecutionSpace::memory_space>& read = {}) {
  detail::check_engine_inputs(exchange.comm(), graph, schedule, steps, inputs);
  return detail::StepRunner<ExecutionSpace>(exec, exchange, graph, schedule, options, std::move(inputs), read)
      .run(steps);
}

}  // namespace einrel::engine

#endif
