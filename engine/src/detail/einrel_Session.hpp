#ifndef EINREL_SESSION_HPP
#define EINREL_SESSION_HPP

#include <einrel_BlockPool.hpp>
#include <einrel_Carried.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_DryRun.hpp>
#include <einrel_Engine.hpp>
#include <einrel_ExecutionReport.hpp>
#include <einrel_NodeMemory.hpp>
#include <einrel_Options.hpp>
#include <einrel_PipelineOptions.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_RankSteps.hpp>
#include <einrel_WarmMemory.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace einrel::engine {

namespace detail {

// With a memory limit, the pool caches at most the smaller of the bytes the plan leaves under the limit and
// 1/16 of this rank's estimated peak, so that the memory it holds — blocks in use plus free ones cached —
// stays within the limit and near the estimate; the previous cache limit comes back with the session.
template <class MemorySpace>
class PoolCacheLimit {
 public:
  PoolCacheLimit(std::optional<std::size_t> memory_limit, std::size_t estimate)
      : previous_(BlockPool<MemorySpace>::instance().cache_limit()) {
    if (!memory_limit) return;
    const std::size_t slack = *memory_limit > estimate ? *memory_limit - estimate : 0;
    BlockPool<MemorySpace>::instance().set_cache_limit(std::min({previous_, slack, estimate / 16}));
  }
  PoolCacheLimit(const PoolCacheLimit&) = delete;
  PoolCacheLimit& operator=(const PoolCacheLimit&) = delete;
  ~PoolCacheLimit() { BlockPool<MemorySpace>::instance().set_cache_limit(previous_); }

 private:
  std::size_t previous_;
};

}  // namespace detail

// The pipeline every way of running a graph shares (`einrel run`, `einrel train`, `einrel matrix-chain` and
// einrel::Program; docs/engine.md "The pipeline"): plan within the memory limit, schedule, this rank's
// step list, the dry run's estimate and the node's memory check, once; then warm memory and the
// collectives' communicators, once; then any number of executions, each reusing the exchange's buffers
// and the pool's blocks.
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class Session {
 public:
  using memory_space = typename ExecutionSpace::memory_space;
  using Values = std::vector<std::optional<AnyDistributed<memory_space>>>;

  // Collective over comm: plans `graph` for comm's ranks as `options` say (choose_plan, which makes the
  // schedule and its dry run; `carried` pairs for a step graph run again and again, partition::Carried; a
  // two-level machine on the nodes MPI_COMM_TYPE_SHARED finds unless options.machine.ranks_per_node names them),
  // makes this rank's steps, and checks that the ranks of each node fit in its memory (of each GPU there, for a
  // device memory space). Throws the same Error on every rank for a bad graph, planner, p or memory limit.
  Session(const comm::Communicator& comm, Graph graph, PipelineOptions options, partition::Carried carried = {})
      : comm_(comm), graph_(std::move(graph)), options_(std::move(options)), carried_(std::move(carried)) {
    // A machine of two levels prices messages by the nodes of comm's ranks, unless told them (a simulated map).
    MachineModel& machine = options_.machine;
    if (machine.two_rates() && machine.ranks_per_node == 0) machine.ranks_per_node = comm::ranks_per_node(comm_);
    comm::collectively(comm_, [&] {
      fitted_.emplace(choose_plan(graph_, comm_.size(), options_, carried_));
      if (fitted_->rewrites_graph()) {  // what runs: the same inputs and outputs by name
        given_.emplace(std::move(graph_));
        graph_ = fitted_->graph(*given_);
      }
      steps_ = rank_steps(graph_, fitted_->schedule, comm_.rank());
    });
    check_node_memory(comm_.get(), estimated_peak_bytes(),
                      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible);
    cache_limit_.emplace(options_.memory_limit, estimated_peak_bytes());
  }

  const comm::Communicator& comm() const { return comm_; }
  // The graph that runs: the one given, or where the plan slices a label or splits an n-ary einsum in another
  // order, that graph (FittedPlan::graph), whose inputs and outputs have the given graph's names; other vertices
  // may be numbered or computed otherwise.
  const Graph& graph() const { return graph_; }
  // The graph the session was given (graph() unless the plan rewrites it): what it computes.
  const Graph& given_graph() const { return given_ ? *given_ : graph_; }
  const PipelineOptions& options() const { return options_; }
  const partition::Carried& carried() const { return carried_; }
  // The plan chosen, with its schedule and dry run.
  const FittedPlan& fitted() const { return *fitted_; }
  const partition::Plan& plan() const { return fitted_->plan; }
  const Schedule& schedule() const { return fitted_->schedule; }
  const RankSteps& steps() const { return steps_; }
  // The dry run of the schedule on every rank (what execute measures, and the memory estimate).
  const Traffic& estimate() const { return fitted_->dry_run; }
  std::size_t estimated_peak_bytes() const {
    return estimate().peak_memory_bytes[static_cast<std::size_t>(comm_.rank())];
  }
  redistribute::Exchange<memory_space>& exchange() { return exchange_; }

  // Collective: with options().warm_memory, takes every block and buffer the executions will use, makes
  // the collectives' communicators and sends a first message to each peer (warm_memory, prepare_collectives,
  // prepare_messages), once; call it before loading the
  // inputs, whose blocks then come from the pool too. Later calls do nothing.
  void prepare(const ExecutionSpace& exec) {
    if (prepared_ || !options_.warm_memory) return;
    const Options& options = options_;
    std::set<int> peers;
    comm::collectively(comm_,
                       [&] { peers = warm_memory(exec, exchange_, graph_, fitted_->schedule, steps_, options); });
    prepare_collectives(exec, exchange_, graph_, fitted_->schedule);
    prepare_messages(comm_, peers);
    prepared_ = true;
  }

  // Collective: runs the graph once on this rank's blocks of every input (in schedule().layout(input)),
  // as execute() does, with `read` for the inputs read again (Options::input_reads); the same Error on every
  // rank when any rank fails.
  EngineResult<memory_space> execute(const ExecutionSpace& exec, Values inputs,
                                     const InputReader<memory_space>& read = {}) {
    return engine::execute(exec, exchange_, graph_, fitted_->schedule, steps_, std::move(inputs), options_, read);
  }

  // Collective: every rank's figures of `result`, an execution of this session, on every rank; the allocator
  // peaks are the pool's since its statistics were last reset (BlockPool::reset_statistics) with the
  // exchange's buffers.
  ExecutionReport report(const ExecutionSpace& exec, const EngineResult<memory_space>& result) const {
    std::vector<long long> nonfinite;
    comm::collectively(comm_, [&] { nonfinite = nonfinite_counts(exec, graph_, result.values, comm_.rank()); });
    const std::size_t allocated =
        BlockPool<memory_space>::instance().statistics().peak_bytes_held + exchange_.buffer_capacity_bytes();
    return gather_execution_report(comm_, graph_, result.vertices, result.traffic, allocated, nonfinite);
  }

 private:
  comm::Communicator comm_;
  Graph graph_;
  std::optional<Graph> given_;  // where graph_ is the sliced graph
  PipelineOptions options_;
  partition::Carried carried_;
  std::optional<FittedPlan> fitted_;
  RankSteps steps_;
  std::optional<detail::PoolCacheLimit<memory_space>> cache_limit_;
  redistribute::Exchange<memory_space> exchange_{comm_};
  bool prepared_ = false;
};

}  // namespace einrel::engine

#endif
