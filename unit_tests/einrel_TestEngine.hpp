#ifndef EINREL_TESTENGINE_HPP
#define EINREL_TESTENGINE_HPP

#include <einrel_Communicator.hpp>
#include <einrel_Engine.hpp>
#include <einrel_Exchange.hpp>
#include <einrel_RankSteps.hpp>

#include <optional>
#include <utility>
#include <vector>

// engine::execute for tests that run a schedule once: this rank's steps computed for the call, on a given
// exchange or on one of the call's own. The schedule must be for the communicator's ranks.

namespace einrel::test {

template <class Exec>
using EngineValues = std::vector<std::optional<engine::AnyDistributed<typename Exec::memory_space>>>;

template <class Exec>
engine::EngineResult<typename Exec::memory_space> execute_once(
    const Exec& exec, redistribute::Exchange<typename Exec::memory_space>& exchange, const Graph& g,
    const engine::Schedule& schedule, EngineValues<Exec> inputs, const engine::PipelineOptions& options = {},
    const engine::InputReader<typename Exec::memory_space>& read = {}) {
  return engine::execute(exec, exchange, g, schedule, engine::rank_steps(g, schedule, exchange.comm().rank()),
                         std::move(inputs), options, read);
}

template <class Exec>
engine::EngineResult<typename Exec::memory_space> execute_once(
    const Exec& exec, const comm::Communicator& comm, const Graph& g, const engine::Schedule& schedule,
    EngineValues<Exec> inputs, const engine::PipelineOptions& options = {},
    const engine::InputReader<typename Exec::memory_space>& read = {}) {
  redistribute::Exchange<typename Exec::memory_space> exchange(comm);
  return execute_once(exec, exchange, g, schedule, std::move(inputs), options, read);
}

}  // namespace einrel::test

#endif
