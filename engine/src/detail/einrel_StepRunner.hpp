#ifndef EINREL_STEPRUNNER_HPP
#define EINREL_STEPRUNNER_HPP

#include <einrel_BlockCensus.hpp>
#include <einrel_BlockMessages.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_EinsumKernel.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_Exchange.hpp>
#include <einrel_FailureInjection.hpp>
#include <einrel_Graph.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_Options.hpp>
#include <einrel_PipelineOptions.hpp>
#include <einrel_RankSteps.hpp>
#include <einrel_ReshardExecution.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Traffic.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

// The walk that execute() runs over a rank's step list (einrel_Engine.hpp has the entry point).

namespace einrel::engine::detail {

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

// One execution of a rank's steps (RankSteps) on data: the walk execute() runs. Every rule of which block
// is new, shared, kept or released is the step list's; this class only carries them out, measures, and
// samples its block bytes where the dry run does (docs/engine.md "The step list").
template <class ExecutionSpace>
class StepRunner {
 public:
  using Memory = typename ExecutionSpace::memory_space;
  using Values = std::vector<std::optional<AnyDistributed<Memory>>>;

  StepRunner(const ExecutionSpace& exec, redistribute::Exchange<Memory>& exchange, const Graph& graph,
             const Schedule& schedule, const PipelineOptions& options, Values inputs, const InputReader<Memory>& read)
      : exec_(exec),
        exchange_(exchange),
        comm_(exchange.comm()),
        graph_(graph),
        schedule_(schedule),
        options_(options),
        limits_(options.exchange_limits()),
        result_{std::move(inputs), std::vector<VertexMeasure>(graph.size()), RankTraffic{}},
        read_(read) {}

  EngineResult<Memory> run(const RankSteps& steps) {
    const auto start = std::chrono::steady_clock::now();
    for (VertexId v = 0; v < graph_.size(); ++v)  // a streamed input's blocks are read by its kernel calls
      if (schedule_.streamed(v)) result_.values[v].reset();
    sample([](BlockCensus&) {});
    for (VertexId v : steps.unread_inputs) result_.values[v].reset();
    for (const VertexSteps& s : steps.vertices) {
      const auto vertex_start = std::chrono::steady_clock::now();
      dispatch_dtype(graph_.vertex(s.vertex).dtype, [&](auto scalar) { vertex<decltype(scalar)>(s); });
      if (s.dead) result_.values[s.vertex].reset();
      VertexMeasure& measure = result_.vertices[s.vertex];
      // What the other three parts leave of the vertex's time (never negative from clock granularity).
      measure.exchange_seconds = std::max(0.0, seconds_since(vertex_start) - measure.seconds());
      result_.traffic.floats_sent += measure.floats_sent;
      result_.traffic.floats_received += measure.floats_received;
      result_.traffic.tuples += s.work->tuples();
      if (options_.on_vertex_done) options_.on_vertex_done(s.vertex, seconds_since(start));
    }
    if (owed_) agreed([] {});  // the last vertex's kernels made no agreement of their own
    result_.traffic.peak_block_bytes = peak_;
    return std::move(result_);
  }

 private:
  template <class S>
  using D = Distributed<S, Memory>;
  template <class S>
  using Block = Tensor<S, Memory>;
  template <class S>
  using Operands = std::vector<std::optional<D<S>>>;
  template <class S>
  using Partials = std::map<Extent, Block<S>>;
  template <class S>
  using Streamed = std::vector<std::map<Extent, Block<S>>>;  // per operand, its streamed blocks held

  // The bytes of every distinct block held: the values, and what `extra` adds to the census.
  template <class Extra>
  std::size_t census_bytes(const Extra& extra) const {
    BlockCensus census;
    for (const auto& value : result_.values)
      if (value) std::visit([&](const auto& d) { census.add(d.local()); }, *value);
    extra(census);
    return census.bytes();
  }
  // Samples them.
  template <class Extra>
  void sample(const Extra& extra) {
    peak_ = std::max(peak_, census_bytes(extra));
  }
  // Runs `body` and agrees on its outcome (comm::collectively), with a failure held since a skipped agreement:
  // a rank holding one throws it here without running `body`.
  template <class F>
  void agreed(F&& body) {
    comm::collectively(comm_, [&] {
      if (held_) throw Error(*held_);
      body();
    });
    owed_ = false;
  }
  // Runs `body` where no message depends on its outcome before the next agreement: a failure is held for that
  // agreement (agreed) rather than agreed now, and a rank holding one skips `body`.
  template <class F>
  void agreed_later(F&& body) {
    owed_ = true;
    if (held_) return;
    try {
      body();
    } catch (const std::exception& e) {
      held_ = *e.what() ? e.what() : "unknown failure";
    }
  }

  // The operands' blocks, for a census.
  template <class S>
  static auto with(const Operands<S>& operands) {
    return [&operands](BlockCensus& c) {
      for (const auto& d : operands)
        if (d) c.add(d->local());
    };
  }

  template <class S>
  void vertex(const VertexSteps& s) {
    Operands<S> operands(s.work->operands.size());
    Partials<S> partials;
    std::vector<Block<S>> incoming;  // the partial blocks this rank receives to reduce
    place_operands<S>(s, operands);
    run_kernels<S>(s, operands, partials, incoming);
    if (held_) {         // a failure in the kernels: no value, and the next agreement throws it
      operands.clear();  // what the vertex holds is freed before the stand-in takes a buffer
      partials.clear();
      incoming.clear();
      stand_in_reduce<S>(s);
      result_.values[s.vertex].reset();
      return;
    }
    const auto reduce_start = std::chrono::steady_clock::now();
    reduce<S>(s, partials, incoming);
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    Relation<S, Memory> local(vs.output_layout().grid().rank());
    for (const auto& [g, block] : partials) local.insert(vs.output_layout().grid().key(g), block);
    result_.values[s.vertex] = D<S>(comm_, schedule_.layout(s.vertex), std::move(local));
    result_.vertices[s.vertex].reduce_seconds = seconds_since(reduce_start);
  }

  // (1) Operands at the sites of their join tuples: new blocks filled by the exchange or the collectives,
  // blocks shared with the producer, an earlier operand's blocks; then the producers read for the last time
  // are released.
  template <class S>
  void place_operands(const VertexSteps& s, Operands<S>& operands) {
    const Vertex& vertex = graph_.vertex(s.vertex);
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    VertexMeasure& measure = result_.vertices[s.vertex];
    PhaseRegion region(vertex.name, "redistribute");
    std::vector<const redistribute::RedistributionPlan*> plans(s.work->operands.size(), nullptr);
    agreed([&] {
      inject(options_.failure, comm_.rank(), vertex.name, Phase::redistribute);
      for (const OperandSteps& op : s.work->operands) {
        if (op.source != OperandSource::exchange && op.source != OperandSource::read) continue;
        if ((op.source == OperandSource::read || op.source == OperandSource::stream) && !read_)
          throw Error("vertex '" + vertex.name + "' reads input '" + graph_.vertex(vertex.inputs[op.operand]).name +
                      "' from its source, and the engine was given no input reader");
        if (op.source == OperandSource::stream) continue;
        const D<S>& from = std::get<D<S>>(*result_.values[vertex.inputs[op.operand]]);
        operands[op.operand].emplace(comm_, vs.operand_layout(op.operand), operand_blocks<S>(vertex, vs, op, from));
        if (op.source == OperandSource::exchange)
          plans[op.operand] =
              &exchange_plan(op, from.layout(), vs.operand_layout(op.operand), comm_.rank(), sizeof(S), limits_);
      }
      sample(with<S>(operands));
    });
    for (const OperandSteps& op : s.work->operands) {
      if (op.source == OperandSource::stream) continue;
      const D<S>& from = std::get<D<S>>(*result_.values[vertex.inputs[op.operand]]);
      if (op.source == OperandSource::read) {
        read_again<S>(vertex, vs, op, *operands[op.operand], measure);
      } else if (op.source == OperandSource::exchange) {
        const redistribute::ExchangeStats stats =
            exchange_.execute(exec_, *plans[op.operand], from.local(), operands[op.operand]->local());
        measure.floats_sent += stats.elements_sent;
        measure.floats_received += stats.elements_received;
      } else if (op.source == OperandSource::collectives) {
        operands[op.operand].emplace(comm_, vs.operand_layout(op.operand), collective_tile<S>(s.vertex, op, from));
        measure.floats_sent += op.floats_sent;
        measure.floats_received += op.floats_received;
      }
    }
    for (const OperandSteps& op : s.work->operands)
      if (op.source == OperandSource::same_as) operands[op.operand] = operands[op.same_as];
    sample(with<S>(operands));
    for (VertexId in : s.released) result_.values[in].reset();
  }

  // An input's new blocks in an operand's layout filled by the reader (the blocks shared with the input's
  // own layout hold its values already).
  template <class S>
  void read_again(const Vertex& vertex, const VertexSchedule& vs, const OperandSteps& op, const D<S>& operand,
                  VertexMeasure& measure) {
    const BlockGrid& grid = vs.operand_layout(op.operand).grid();
    BoxedBlocks<S, Memory> fresh;
    for (Extent b : op.new_blocks) fresh.emplace_back(grid.box(grid.key(b)), operand.block(grid.key(b)));
    PhaseRegion region(vertex.name, "read");
    const auto read_start = std::chrono::steady_clock::now();
    read_(vertex.inputs[op.operand], AnyBoxedBlocks<Memory>(std::move(fresh)), ReadCall::collective);
    measure.read_seconds += seconds_since(read_start);
    result_.traffic.floats_read += op.floats_read;
  }

  // The streamed blocks a kernel call reads first, taken and filled by the reader, per operand.
  template <class S>
  void read_streamed(const Vertex& vertex, const VertexSteps& s, const KernelCall& call, Streamed<S>& streamed) {
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    for (const OperandSteps& op : s.work->operands) {
      BoxedBlocks<S, Memory> fresh;
      const BlockGrid& grid = vs.operand_layout(op.operand).grid();
      for (const auto& [k, b] : call.reads) {
        if (k != op.operand) continue;
        const Box box = grid.box(grid.key(b));
        fresh.emplace_back(
            box,
            streamed[k].emplace(b, Block<S>::uninitialized(vertex.name + "/streamed", box.extents())).first->second);
      }
      if (!fresh.empty()) read_(vertex.inputs[op.operand], AnyBoxedBlocks<Memory>(std::move(fresh)), ReadCall::local);
    }
  }

  // The blocks of an exchanged operand on this rank: new ones, and those it shares with the producer.
  template <class S>
  static Relation<S, Memory> operand_blocks(const Vertex& vertex, const VertexSchedule& vs, const OperandSteps& op,
                                            const D<S>& from) {
    const BlockGrid& grid = vs.operand_layout(op.operand).grid();
    Relation<S, Memory> local(grid.rank());
    for (Extent b : op.new_blocks)
      local.insert(grid.key(b), Block<S>::uninitialized(vertex.name + "/operand", grid.block_bound(b)));
    for (const auto& [b, kept] : op.shared_blocks) local.insert(grid.key(b), from.block(from.grid().key(kept)));
    return local;
  }

  // The rank's one tile of an operand moved by the schedule's collectives.
  template <class S>
  Relation<S, Memory> collective_tile(VertexId v, const OperandSteps& op, const D<S>& from) {
    const Vertex& vertex = graph_.vertex(v);
    const redistribute::mesh::ReshardPlan& plan = *schedule_.transition(v, op.operand).plan;
    const int rank = comm_.rank();
    const Block<S> tile = from.block(redistribute::mesh::tile_key(plan.from, plan.mesh, rank));
    Relation<S, Memory> local(schedule_.vertex(v).operand_layout(op.operand).grid().rank());
    local.insert(redistribute::mesh::tile_key(plan.to, plan.mesh, rank),
                 redistribute::mesh::execute_reshard(
                     exec_, exchange_.process_mesh(plan.mesh), plan, tile,
                     [&](std::size_t step) {
                       if (step + 1 == plan.steps.size())
                         inject(options_.failure, rank, vertex.name, Phase::collective);
                     },
                     limits_.max_message_elements));
    return local;
  }

  // (2) Every kernel call: a new partial block per output block (the first operand's block in place), later
  // calls of that block accumulating into it; then, the operands released, the reduction's incoming blocks
  // allocated (prepare_reduce). A failure here waits for the next agreement, the rank that met it standing in for
  // its part of the reduction (stand_in_reduce; docs/engine.md "Failures").
  template <class S>
  void run_kernels(const VertexSteps& s, Operands<S>& operands, Partials<S>& partials,
                   std::vector<Block<S>>& incoming) {
    const Vertex& vertex = graph_.vertex(s.vertex);
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    const EinSum& e = vertex.resolved->einsum();
    const BlockGrid& out = vs.output_layout().grid();
    const auto kernels_start = std::chrono::steady_clock::now();
    double read_seconds = 0;
    {
      PhaseRegion region(vertex.name, "kernels");
      Streamed<S> streamed(operands.size());
      // The census does not change while the kernels run but for the blocks they take and release, all fresh:
      // counted as they come and go rather than by a census per call (a sparse vertex makes many calls).
      const std::size_t held = census_bytes(with<S>(operands));
      std::size_t taken = 0;
      auto bytes = [](const Block<S>& b) { return b.view().span() * sizeof(S); };
      auto body = [&] {
        inject(options_.failure, comm_.rank(), vertex.name, Phase::kernels);
        for (const KernelCall& call : s.work->kernels) {
          if (!call.reads.empty()) {
            const auto read_start = std::chrono::steady_clock::now();
            read_streamed<S>(vertex, s, call, streamed);
            read_seconds += seconds_since(read_start);
            for (const auto& [k, b] : call.reads) taken += bytes(streamed[k].at(b));
          }
          auto block = [&](std::size_t k) {
            const Extent b = vs.operand_block(k, call.tuple);
            const auto held = streamed[k].find(b);
            return held != streamed[k].end() ? held->second : operands[k]->block(vs.operand_layout(k).grid().key(b));
          };
          const Block<S> x = block(0);
          std::optional<Block<S>> y;
          if (operands.size() > 1) y = block(1);
          if (!call.accumulate) {
            partials.emplace(
                call.output_block,
                s.in_place ? x : Block<S>::uninitialized(vertex.name + "/partial", out.block_bound(call.output_block)));
            if (!s.in_place) taken += bytes(partials.at(call.output_block));  // in place: an operand's block
          }
          if (!call.accumulate || !call.reads.empty()) peak_ = std::max(peak_, held + taken);
          const ResolvedEinSum resolved = y ? resolve(e, {x.bound(), y->bound()}) : resolve(e, {x.bound()});
          result_.traffic.flops += call_flops(resolved, operands.size());
          kernels::einsum(exec_, resolved, x, y, partials.at(call.output_block), call.accumulate);
          if (call.releases.empty()) continue;
          compat::fence(exec_, "einrel::engine: streamed blocks of " + vertex.name + " read");  // before reuse
          for (const auto& [k, b] : call.releases) {
            taken -= bytes(streamed[k].at(b));
            streamed[k].erase(b);
          }
        }
        compat::fence(exec_, "einrel::engine: kernels of " + vertex.name);
        operands.clear();
        prepare_reduce<S>(s, partials, incoming);
      };
      agreed_later(body);
    }
    result_.vertices[s.vertex].kernel_seconds = seconds_since(kernels_start) - read_seconds;
    result_.vertices[s.vertex].read_seconds += read_seconds;
  }

  // Before (3), inside the kernels' agreement: the blocks this rank receives, unless the reduction is deferred.
  template <class S>
  void prepare_reduce(const VertexSteps& s, const Partials<S>& partials, std::vector<Block<S>>& incoming) {
    const Vertex& vertex = graph_.vertex(s.vertex);
    inject(options_.failure, comm_.rank(), vertex.name, Phase::reduce);
    if (s.work->deferred) return;
    const BlockGrid& out = schedule_.vertex(s.vertex).output_layout().grid();
    for (const PartialMessage& m : s.work->receives)
      incoming.push_back(Block<S>::uninitialized(vertex.name + "/incoming", out.block_bound(m.output_block)));
    sample([&](BlockCensus& c) {
      for (const auto& [g, p] : partials) c.add(p);
      for (const Block<S>& b : incoming) c.add(b);
    });
  }

  // (3) Partials to the owners of their output blocks, ⊕-combined in rank order, unless the reduction is
  // deferred to the reader's collectives (the partials are then the value).
  template <class S>
  void reduce(const VertexSteps& s, Partials<S>& partials, std::vector<Block<S>>& incoming) {
    if (s.work->deferred) return;
    const Vertex& vertex = graph_.vertex(s.vertex);
    PhaseRegion region(vertex.name, "reduce");
    redistribute::BlockMessages<S, Memory> messages(comm_.get(), reduce_tag, limits_.max_message_elements);
    for (std::size_t i = 0; i < s.work->receives.size(); ++i) messages.receive(incoming[i], s.work->receives[i].peer);
    for (const PartialMessage& m : s.work->sends) {
      messages.send(partials.at(m.output_block), m.peer);
      partials.erase(m.output_block);  // the message keeps its block until sent
    }
    messages.wait();
    for (std::size_t i = 0; i < s.work->receives.size(); ++i)
      kernels::accumulate(exec_, vertex.resolved->einsum().agg, partials.at(s.work->receives[i].output_block),
                          incoming[i]);
    compat::fence(exec_, "einrel::engine: reduced " + vertex.name);
    VertexMeasure& measure = result_.vertices[s.vertex];
    measure.floats_sent += messages.elements_sent();
    measure.floats_received += messages.elements_received();
  }

  // (3) on a rank whose kernels failed: every message of its reduction, its sends empty and what it receives
  // dropped (BlockMessages::send_nothing, discard), so that no peer waits for a message that never comes or to
  // send one nobody takes before the next agreement throws the failure.
  template <class S>
  void stand_in_reduce(const VertexSteps& s) {
    if (s.work->deferred) return;
    const BlockGrid& out = schedule_.vertex(s.vertex).output_layout().grid();
    auto elements = [&](const PartialMessage& m) { return static_cast<std::size_t>(out.block_size(m.output_block)); };
    redistribute::BlockMessages<S, Memory> messages(comm_.get(), reduce_tag, limits_.max_message_elements);
    for (const PartialMessage& m : s.work->receives) messages.discard(elements(m), m.peer);
    for (const PartialMessage& m : s.work->sends) messages.send_nothing(elements(m), m.peer);
    messages.wait();
  }

  const ExecutionSpace& exec_;
  redistribute::Exchange<Memory>& exchange_;
  const comm::Communicator& comm_;
  const Graph& graph_;
  const Schedule& schedule_;
  const PipelineOptions& options_;
  const redistribute::ExchangeLimits limits_;
  EngineResult<Memory> result_;
  const InputReader<Memory>& read_;
  std::size_t peak_ = 0;
  std::optional<std::string> held_;  // this rank's failure, held for the next agreement (agreed_later)
  bool owed_ = false;                // an agreement skipped since the last one made
};

// Throws Error (on every rank) unless the schedule is for comm's ranks, `steps` are this rank's and every input
// that is not streamed holds blocks of its dtype in the schedule's layout: one agreement.
template <class MemorySpace>
void check_engine_inputs(const comm::Communicator& comm, const Graph& graph, const Schedule& schedule,
                         const RankSteps& steps,
                         const std::vector<std::optional<AnyDistributed<MemorySpace>>>& values) {
  comm::collectively(comm, [&] {
    if (schedule.ranks() != comm.size())
      throw Error("a schedule for " + std::to_string(schedule.ranks()) + " ranks cannot run on " +
                  std::to_string(comm.size()));
    if (steps.rank != comm.rank())
      throw Error("the steps of rank " + std::to_string(steps.rank) + " cannot run on rank " +
                  std::to_string(comm.rank()));
    if (values.size() != graph.size())
      throw Error("the engine got " + std::to_string(values.size()) + " values for a graph of " +
                  std::to_string(graph.size()) + " vertices");
    for (VertexId v = 0; v < graph.size(); ++v) {
      const Vertex& vertex = graph.vertex(v);
      if (!vertex.is_input() || schedule.streamed(v)) continue;  // a streamed input is read during the run
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
}

}  // namespace einrel::engine::detail

#endif
