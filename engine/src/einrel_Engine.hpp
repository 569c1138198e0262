#ifndef EINREL_ENGINE_HPP
#define EINREL_ENGINE_HPP

#include <einrel_BlockCensus.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_Config.hpp>
#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_EinsumKernel.hpp>
#include <einrel_Exchange.hpp>
#include <einrel_FailureInjection.hpp>
#include <einrel_Graph.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_ReshardExecution.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Traffic.hpp>
#include <einrel_Wait.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <climits>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace einrel::engine {

template <class MemorySpace>
using AnyDistributed = std::variant<redistribute::DistributedTensorRelation<float, MemorySpace>,
                                    redistribute::DistributedTensorRelation<double, MemorySpace>>;

struct EngineOptions {
  redistribute::ExchangeLimits limits;      // --comm-buffer-limit
  std::optional<FailureInjection> failure;  // test-only
  // Called on every rank after each EinSum vertex with its id and the seconds since execute began.
  std::function<void(VertexId, double)> on_vertex_done;
};

// What one rank measured for one vertex: wall time of the whole vertex and of its kernels, and the floats
// it sent to and received from other ranks (operand exchanges and the reduction of partials).
struct VertexMeasure {
  double seconds = 0;
  double kernel_seconds = 0;
  Extent floats_sent = 0;
  Extent floats_received = 0;
};

// The values of the graph's outputs (indexed by vertex; other entries empty), distributed in the
// schedule's layouts, and what this rank measured.
template <class MemorySpace>
struct EngineResult {
  std::vector<std::optional<AnyDistributed<MemorySpace>>> values;
  std::vector<VertexMeasure> vertices;
  RankTraffic traffic;
};

namespace detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A Kokkos profiling region for one phase of one vertex ("einrel::engine C redistribute").
class PhaseRegion {
 public:
  PhaseRegion(const std::string& vertex, const char* phase) {
    Kokkos::Profiling::pushRegion("einrel::engine " + vertex + " " + phase);
  }
  PhaseRegion(const PhaseRegion&) = delete;
  PhaseRegion& operator=(const PhaseRegion&) = delete;
  ~PhaseRegion() { Kokkos::Profiling::popRegion(); }
};

constexpr int reduce_tag = 7;  // the reduction's messages; a vertex's exchanges have completed before it

template <class Scalar, class MemorySpace>
using Distributed = redistribute::DistributedTensorRelation<Scalar, MemorySpace>;

// Sends and receives whole blocks of Scalar, staged through host copies when MPI cannot read MemorySpace.
template <class Scalar, class MemorySpace>
class BlockMessages {
  static constexpr bool direct =
      EINREL_ENABLE_GPU_AWARE_MPI || Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  using Block = Tensor<Scalar, MemorySpace>;
  using HostView = Kokkos::View<Scalar*, Kokkos::HostSpace>;

 public:
  explicit BlockMessages(MPI_Comm comm) : comm_(comm) {}
  void receive(const Block& block, int peer) {
    receive_blocks_.push_back(block);
    Scalar* data = block.view().data();
    if constexpr (!direct) {
      receive_staging_.push_back(staging(block));
      data = receive_staging_.back().data();
    }
    post(MPI_Irecv, data, block.view().extent(0), peer);
  }
  // The block must be complete (fenced).
  void send(const Block& block, int peer) {
    send_blocks_.push_back(block);
    Scalar* data = block.view().data();
    if constexpr (!direct) {
      send_staging_.push_back(staging(block));
      Kokkos::deep_copy(send_staging_.back(), block.view());
      data = send_staging_.back().data();
    }
    post(MPI_Isend, data, block.view().extent(0), peer);
  }
  // Waits for every message; received blocks are complete when this returns.
  void wait() {
    redistribute::wait_all(requests_, "MPI_Testall");
    if constexpr (!direct)
      for (std::size_t i = 0; i < receive_blocks_.size(); ++i)
        Kokkos::deep_copy(receive_blocks_[i].view(), receive_staging_[i]);
  }
  Extent elements_sent() const { return count(send_blocks_); }
  Extent elements_received() const { return count(receive_blocks_); }

 private:
  static HostView staging(const Block& block) {
    return HostView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "einrel::engine/staging"), block.view().extent(0));
  }
  template <class Post, class Data>
  void post(Post mpi_post, Data* data, std::size_t n, int peer) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw Error("a partial result block of " + std::to_string(n) + " elements exceeds one MPI message");
    requests_.push_back(MPI_REQUEST_NULL);
    redistribute::check_mpi(mpi_post(data, static_cast<int>(n), redistribute::mpi_datatype<Scalar>(), peer, reduce_tag,
                                     comm_, &requests_.back()),
                            "MPI_Isend/MPI_Irecv");
  }
  static Extent count(const std::vector<Block>& blocks) {
    Extent n = 0;
    for (const Block& b : blocks) n += static_cast<Extent>(b.view().extent(0));
    return n;
  }

  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  std::vector<Block> send_blocks_, receive_blocks_;
  std::vector<HostView> send_staging_, receive_staging_;
};

}  // namespace detail

// Collective over comm: evaluates `graph` on the ranks of comm as `schedule` (planned for comm's size)
// says (DESIGN.md §6). `inputs` holds, for every input vertex, this rank's blocks in
// schedule.layout(input) (other entries empty; an input nothing reads and no output keeps is released at
// once). Per EinSum vertex: (1) each operand is exchanged from its producer's layout to the sites of its
// join tuples (blocks that stay on a rank with the same cut are shared, not copied), and a producer is
// released after its last reader; (2) every local join tuple runs its block kernel, accumulating into one
// partial block per output block (an in-place vertex, Schedule::in_place, writes into its first operand's
// blocks instead); (3) partials move to the owner of their output block, which ⊕-combines them in rank
// order (a reduce-scatter), and the output stays distributed. An exception on any rank in
// any phase (including an injected one) is thrown on every rank with the same message.
//
// Every exchange runs on `exchange`, whose buffers are reused across vertices and calls; blocks come from
// the memory space's BlockPool, so a caller that executes the same schedule again with a kept exchange
// (einrel::Program) allocates nothing after the first call.
template <class ExecutionSpace>
EngineResult<typename ExecutionSpace::memory_space> execute(
    const ExecutionSpace& exec, redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange,
    const Graph& graph, const Schedule& schedule,
    std::vector<std::optional<AnyDistributed<typename ExecutionSpace::memory_space>>> inputs,
    const EngineOptions& options = {}) {
  using Memory = typename ExecutionSpace::memory_space;
  const redistribute::Communicator& comm = exchange.comm();
  const int rank = comm.rank();
  const auto start = std::chrono::steady_clock::now();
  EngineResult<Memory> result{std::move(inputs), std::vector<VertexMeasure>(graph.size()), RankTraffic{}};
  auto& values = result.values;

  redistribute::collectively(comm, [&] {
    if (schedule.ranks() != comm.size())
      throw Error("a schedule for " + std::to_string(schedule.ranks()) + " ranks cannot run on " +
                  std::to_string(comm.size()));
    if (values.size() != graph.size())
      throw Error("the engine got " + std::to_string(values.size()) + " values for a graph of " +
                  std::to_string(graph.size()) + " vertices");
    for (VertexId v = 0; v < graph.size(); ++v) {
      const Vertex& vertex = graph.vertex(v);
      if (!vertex.is_input()) continue;
      const bool fits = values[v] && std::visit(
                                         [&](const auto& d) {
                                           using S = typename std::decay_t<decltype(d)>::block_type::scalar_type;
                                           return dtype_of<S>() == vertex.dtype && d.layout() == schedule.layout(v);
                                         },
                                         *values[v]);
      if (!fits)
        throw Error("input '" + vertex.name + "' needs " + std::string(dtype_name(vertex.dtype)) +
                    " blocks in the schedule's layout of " + to_string(vertex.bound));
    }
  });

  std::size_t peak = 0;
  // The engine's block bytes, measured: every distinct block view it holds, values and `extra`.
  auto sample = [&](const auto& extra) {
    BlockCensus census;
    for (const auto& value : values)
      if (value) std::visit([&](const auto& d) { census.add(d.local()); }, *value);
    extra(census);
    peak = std::max(peak, census.bytes());
  };
  Lifetimes lifetimes(schedule);
  sample([](BlockCensus&) {});
  for (VertexId v : lifetimes.unread_inputs(graph)) values[v].reset();

  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const VertexSchedule& vs = schedule.vertex(v);
    const EinSum& e = vertex.resolved->einsum();
    VertexMeasure& measure = result.vertices[v];
    const auto vertex_start = std::chrono::steady_clock::now();
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using S = decltype(scalar);
      using D = detail::Distributed<S, Memory>;
      using Block = Tensor<S, Memory>;

      // (1) Operands at the sites of their join tuples: by the exchange, or by collectives where the schedule
      // chose them (the result is the rank's one block of the operand layout).
      std::vector<std::optional<D>> operands(vertex.inputs.size());
      std::vector<std::optional<redistribute::RedistributionPlan>> plans(vertex.inputs.size());
      auto operand_blocks = [&](BlockCensus& c) {
        for (const auto& d : operands)
          if (d) c.add(d->local());
      };
      auto by_collectives = [&](std::size_t k) {
        return !schedule.shared_operand(v, k) && schedule.transition(v, k).path == TransitionPath::collectives;
      };
      {
        detail::PhaseRegion region(vertex.name, "redistribute");
        redistribute::collectively(comm, [&] {
          inject(options.failure, rank, vertex.name, Phase::redistribute);
          for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
            if (schedule.shared_operand(v, k) || by_collectives(k)) continue;
            const D& from = std::get<D>(*values[vertex.inputs[k]]);
            const redistribute::BlockLayout& to = vs.operand_layout(k);
            Relation<S, Memory> local(to.grid().rank());
            for (Extent b : to.blocks_of(rank)) {
              const Key key = to.grid().key(b);
              local.insert(key, from.grid() == to.grid() && from.holds(key)
                                    ? from.block(key)
                                    : Block::uninitialized(vertex.name + "/operand", to.grid().box(key).extents()));
            }
            operands[k].emplace(comm, to, std::move(local));
            plans[k].emplace(from.layout(), to, rank, sizeof(S), options.limits);
          }
          sample(operand_blocks);
        });
        for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
          const D& from = std::get<D>(*values[vertex.inputs[k]]);
          if (plans[k]) {
            const redistribute::ExchangeStats stats =
                exchange.execute(exec, *plans[k], from.local(), operands[k]->local());
            measure.floats_sent += stats.elements_sent;
            measure.floats_received += stats.elements_received;
          } else if (by_collectives(k)) {
            const Transition& transition = schedule.transition(v, k);
            const redistribute::ReshardPlan& plan = *transition.plan;
            const Block tile = from.block(redistribute::tile_key(plan.from, plan.mesh, rank));
            Relation<S, Memory> local(vs.operand_layout(k).grid().rank());
            local.insert(redistribute::tile_key(plan.to, plan.mesh, rank),
                         redistribute::execute_reshard(
                             exec, exchange.process_mesh(plan.mesh), plan, tile, [&](std::size_t step) {
                               if (step + 1 == plan.steps.size())
                                 inject(options.failure, rank, vertex.name, Phase::collective);
                             }));
            operands[k].emplace(comm, vs.operand_layout(k), std::move(local));
            measure.floats_sent += transition.volumes.sent[rank];
            measure.floats_received += transition.volumes.received[rank];
          }
        }
        for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
          if (const auto same = schedule.shared_operand(v, k)) operands[k] = operands[*same];
        sample(operand_blocks);
        for (VertexId in : lifetimes.read_operands(vertex)) values[in].reset();
      }

      // (2) Local join tuples, each output block's tuples accumulated into one partial block.
      std::map<Extent, Block> partials;
      const BlockGrid& out = vs.output_layout().grid();
      const auto kernels_start = std::chrono::steady_clock::now();
      {
        detail::PhaseRegion region(vertex.name, "kernels");
        redistribute::collectively(comm, [&] {
          inject(options.failure, rank, vertex.name, Phase::kernels);
          const auto [first, last] = vs.tuples_of(rank);
          for (Extent t = first; t < last; ++t) {
            const Block& x = operands[0]->block(vs.operand_layout(0).grid().key(vs.operand_block(0, t)));
            std::optional<Block> y;
            if (operands.size() > 1) y = operands[1]->block(vs.operand_layout(1).grid().key(vs.operand_block(1, t)));
            const ResolvedEinSum block = y ? resolve(e, {x.bound(), y->bound()}) : resolve(e, {x.bound()});
            const Extent g = vs.output_block(t);
            auto it = partials.find(g);
            const bool accumulate = it != partials.end();
            if (!accumulate) {
              it = partials
                       .emplace(g, schedule.in_place(v)
                                       ? x
                                       : Block::uninitialized(vertex.name + "/partial", out.box(out.key(g)).extents()))
                       .first;
              sample([&](BlockCensus& c) {
                operand_blocks(c);
                for (const auto& [key, p] : partials) c.add(p);
              });
            }
            kernels::einsum(exec, block, x, y, it->second, accumulate);
          }
          compat::fence(exec, "einrel::engine: kernels of " + vertex.name);
        });
        result.traffic.tuples += vs.tuples_of(rank).second - vs.tuples_of(rank).first;
        operands.clear();
      }
      measure.kernel_seconds = detail::seconds_since(kernels_start);

      // (3) Partials to the owners of their output blocks, ⊕-combined in rank order, unless the reduction is
      // deferred to the reader's collectives (the partials are then the value).
      if (!schedule.deferred(v)) {
        detail::PhaseRegion region(vertex.name, "reduce");
        std::vector<std::pair<Extent, Block>> incoming;
        redistribute::collectively(comm, [&] {
          inject(options.failure, rank, vertex.name, Phase::reduce);
          for (Extent g : vs.output_layout().blocks_of(rank)) {
            const std::vector<int> ranks = vs.contributors(g);
            for (std::size_t i = 1; i < ranks.size(); ++i)
              incoming.emplace_back(g, Block::uninitialized(vertex.name + "/incoming", out.box(out.key(g)).extents()));
          }
          sample([&](BlockCensus& c) {
            for (const auto& [key, p] : partials) c.add(p);
            for (const auto& [g, b] : incoming) c.add(b);
          });
        });
        detail::BlockMessages<S, Memory> messages(comm.get());
        {
          std::size_t next = 0;
          for (Extent g : vs.output_layout().blocks_of(rank)) {
            const std::vector<int> ranks = vs.contributors(g);
            for (std::size_t i = 1; i < ranks.size(); ++i) messages.receive(incoming[next++].second, ranks[i]);
          }
        }
        for (auto it = partials.begin(); it != partials.end();) {
          const int owner = vs.tuple_rank(it->first * vs.group_size());
          if (owner == rank) {
            ++it;
            continue;
          }
          messages.send(it->second, owner);
          it = partials.erase(it);  // the message keeps its block until sent
        }
        messages.wait();
        for (const auto& [g, b] : incoming) kernels::accumulate(exec, e.agg, partials.at(g), b);
        compat::fence(exec, "einrel::engine: reduced " + vertex.name);
        measure.floats_sent += messages.elements_sent();
        measure.floats_received += messages.elements_received();
      } else {
        redistribute::collectively(comm, [&] { inject(options.failure, rank, vertex.name, Phase::reduce); });
      }
      Relation<S, Memory> local(out.rank());
      for (const auto& [g, block] : partials) local.insert(out.key(g), block);
      values[v] = D(comm, schedule.layout(v), std::move(local));
    });
    if (lifetimes.dead(v)) values[v].reset();
    measure.seconds = detail::seconds_since(vertex_start);
    result.traffic.floats_sent += measure.floats_sent;
    result.traffic.floats_received += measure.floats_received;
    if (options.on_vertex_done) options.on_vertex_done(v, detail::seconds_since(start));
  }
  result.traffic.peak_block_bytes = peak;
  return result;
}

// The same on a communicator, with an exchange of its own for this call.
template <class ExecutionSpace>
EngineResult<typename ExecutionSpace::memory_space> execute(
    const ExecutionSpace& exec, const redistribute::Communicator& comm, const Graph& graph, const Schedule& schedule,
    std::vector<std::optional<AnyDistributed<typename ExecutionSpace::memory_space>>> inputs,
    const EngineOptions& options = {}) {
  redistribute::Exchange<typename ExecutionSpace::memory_space> exchange(comm);
  return execute(exec, exchange, graph, schedule, std::move(inputs), options);
}

}  // namespace einrel::engine

#endif
