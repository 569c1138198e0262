#ifndef EINREL_WARMMEMORY_HPP
#define EINREL_WARMMEMORY_HPP

#include <einrel_Communicator.hpp>
#include <einrel_Contraction.hpp>
#include <einrel_CublasGemm.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_RankSteps.hpp>
#include <einrel_ReshardVolumes.hpp>
#include <einrel_Wait.hpp>

#include <mpi.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace einrel::engine {

namespace detail {

// A kernel call that reaches the vendor GEMM: its vertex, operand bounds and GEMM.
struct VendorGemmCall {
  VertexId vertex = 0;
  std::vector<Bound> bounds;
  kernels::GemmCall gemm;
};

// Per dtype, of the vendor GEMMs this rank's kernel calls make, the one with the most rows (then columns,
// then inner extent): the call whose workspace in the vendor BLAS is largest (kernels::warm_vendor_gemm).
inline std::map<Dtype, VendorGemmCall> largest_gemm_calls(const Graph& graph, const Schedule& schedule,
                                                          const RankSteps& steps, const kernels::KernelTarget& target) {
  std::map<Dtype, VendorGemmCall> largest;
  for (const VertexSteps& s : steps.vertices) {
    const Vertex& vertex = graph.vertex(s.vertex);
    std::set<std::vector<Bound>> calls;
    for (const KernelCall& call : s.work->kernels) calls.insert(schedule.vertex(s.vertex).tuple_bounds(call.tuple));
    for (const std::vector<Bound>& bounds : calls) {
      const auto gemm = kernels::vendor_gemm_call(resolve(vertex.resolved->einsum(), bounds),
                                                  {vertex.dtype, target.threads, target.host});
      if (!gemm) continue;
      const auto kept = largest.find(vertex.dtype);
      if (kept == largest.end() ||
          std::tie(gemm->rows, gemm->cols, gemm->inner) >
              std::tie(kept->second.gemm.rows, kept->second.gemm.cols, kept->second.gemm.inner))
        largest[vertex.dtype] = {s.vertex, bounds, *gemm};
    }
  }
  return largest;
}

// One walk of a rank's steps that takes every block from the pool as execute() will and gives it back
// when execute() would (warm_memory).
template <class ExecutionSpace>
class WarmWalk {
 public:
  using Memory = typename ExecutionSpace::memory_space;

  WarmWalk(const ExecutionSpace& exec, redistribute::Exchange<Memory>& exchange, const Graph& graph,
           const Schedule& schedule, const Options& options)
      : exec_(exec),
        exchange_(exchange),
        graph_(graph),
        schedule_(schedule),
        options_(options),
        target_{Dtype::f64, exec.concurrency(),
                Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                kernels::strided_batches<ExecutionSpace>()},
        held_(graph.size()) {}

  void run(const RankSteps& steps) {
    vendor_gemm_ = largest_gemm_calls(graph_, schedule_, steps, target_);
    // The inputs' blocks first, released as execute releases them: the caller loads its inputs after this
    // walk, into these blocks (then cached), and the walk allocates what execute will, no more.
    for (const auto& [v, blocks] : steps.inputs)
      dispatch_dtype(graph_.vertex(v).dtype, [&, v = v, &blocks = blocks](auto scalar) {
        const BlockGrid& grid = schedule_.layout(v).grid();
        for (Extent b : blocks) held_[v].emplace(b, take<decltype(scalar)>(grid.block_bound(b)));
      });
    for (VertexId v : steps.unread_inputs) held_[v].clear();
    for (const VertexSteps& s : steps.vertices) {
      dispatch_dtype(graph_.vertex(s.vertex).dtype, [&](auto scalar) { vertex<decltype(scalar)>(s); });
      if (s.dead) held_[s.vertex].clear();
    }
    compat::fence(exec_, "einrel::engine: memory warmed");
  }
  // The ranks this rank's steps exchange point-to-point messages with (operand exchanges, reductions).
  const std::set<int>& peers() const { return peers_; }

 private:
  template <class S>
  using Block = Tensor<S, Memory>;
  using Blocks = std::map<Extent, AnyTensor<Memory>>;

  template <class S>
  Block<S> take(const Bound& bound) {
    Block<S> b = Block<S>::uninitialized("einrel::engine/warm", bound);
    Kokkos::deep_copy(exec_, b.view(), S(0));
    return b;
  }

  template <class S>
  void vertex(const VertexSteps& s) {
    std::vector<Blocks> operands(s.work->operands.size());
    for (const OperandSteps& op : s.work->operands) place_operand<S>(s.vertex, op, operands[op.operand]);
    for (const OperandSteps& op : s.work->operands)
      if (op.source == OperandSource::same_as) operands[op.operand] = operands[op.same_as];
    for (VertexId in : s.released) held_[in].clear();
    std::map<Extent, Block<S>> partials;
    kernel_calls<S>(s, operands, partials);
    operands.clear();
    const BlockGrid& out = schedule_.vertex(s.vertex).output_layout().grid();
    std::vector<Block<S>> incoming;
    for (const PartialMessage& m : s.work->receives) {
      incoming.push_back(take<S>(out.block_bound(m.output_block)));
      peers_.insert(m.peer);
    }
    for (const PartialMessage& m : s.work->sends) {
      partials.erase(m.output_block);
      peers_.insert(m.peer);
    }
    for (const auto& [g, block] : partials) held_[s.vertex].emplace(g, block);
  }

  // An operand's new blocks taken, its shared ones kept; the temporaries of its collectives taken while its
  // result is, or the exchange's buffers grown to its plan (an input read again needs neither).
  template <class S>
  void place_operand(VertexId v, const OperandSteps& op, Blocks& blocks) {
    if (op.source == OperandSource::same_as) return;
    const redistribute::BlockLayout& to = schedule_.vertex(v).operand_layout(op.operand);
    const VertexId producer = graph_.vertex(v).inputs[op.operand];
    for (Extent b : op.new_blocks) blocks.emplace(b, take<S>(to.grid().block_bound(b)));
    for (const auto& [b, kept] : op.shared_blocks) blocks.emplace(b, held_[producer].at(kept));
    if (op.source == OperandSource::collectives) {
      std::vector<Block<S>> scratch;
      for (Extent n : schedule_.transition(v, op.operand).scratch) scratch.push_back(take<S>({n}));
    } else if (op.source == OperandSource::exchange) {
      const redistribute::RedistributionPlan& plan = exchange_plan(
          op, schedule_.layout(producer), to, exchange_.comm().rank(), sizeof(S), options_.exchange_limits());
      exchange_.prepare(exec_, plan, sizeof(S));
      for (const auto* streams : {&plan.sends(), &plan.receives()})
        for (const redistribute::PeerStream& stream : *streams) peers_.insert(stream.peer);
    }
  }

  // Each call's streamed blocks (given back after their last call) and partial (new, or the first operand's
  // block in place) and its temporaries, taken while the call's partial is and given back after it, as
  // execute does for every call (the pool may hand a freed temporary to the next call's partial, which then
  // needs a temporary of its own); their sizes are computed once per kind of call. The vendor GEMM's workspace is
  // touched on its largest call.
  template <class S>
  void kernel_calls(const VertexSteps& s, std::vector<Blocks>& operands, std::map<Extent, Block<S>>& partials) {
    const Vertex& vertex = graph_.vertex(s.vertex);
    const VertexSchedule& vs = schedule_.vertex(s.vertex);
    const BlockGrid& out = vs.output_layout().grid();
    std::map<std::pair<std::vector<Bound>, bool>, std::vector<Extent>> calls;
    for (const KernelCall& call : s.work->kernels) {
      for (const auto& [k, b] : call.reads) {
        const BlockGrid& grid = vs.operand_layout(k).grid();
        operands[k].emplace(b, take<S>(grid.block_bound(b)));
      }
      const Extent g = call.output_block;
      if (!call.accumulate)
        partials.emplace(g, s.in_place ? std::get<Block<S>>(operands[0].at(vs.operand_block(0, call.tuple)))
                                       : take<S>(out.block_bound(g)));
      const std::vector<Bound> bounds = vs.tuple_bounds(call.tuple);
      auto kind = calls.find({bounds, call.accumulate});
      if (kind == calls.end())
        kind = calls
                   .emplace(
                       std::pair{bounds, call.accumulate},
                       kernels::einsum_scratch(resolve(vertex.resolved->einsum(), bounds), call.accumulate,
                                               {vertex.dtype, target_.threads, target_.host, target_.strided_batches}))
                   .first;
      std::vector<Block<S>> scratch;
      for (Extent n : kind->second) scratch.push_back(take<S>({n}));
      const auto warm = vendor_gemm_.find(vertex.dtype);
      if (warm != vendor_gemm_.end() && warm->second.vertex == s.vertex && warm->second.bounds == bounds) {
        auto data = [&](std::size_t k) -> const S* {  // operand k's block of this call
          const auto found = operands[k].find(vs.operand_block(k, call.tuple));
          return found == operands[k].end() ? nullptr : std::get<Block<S>>(found->second).view().data();
        };
        const kernels::GemmCall& gemm = warm->second.gemm;
        if (const S* a = data(gemm.swapped), *b = data(!gemm.swapped); a && b)
          kernels::warm_vendor_gemm<ExecutionSpace, S, Memory>(exec_, gemm, a, b, partials.at(g).view().data());
        vendor_gemm_.erase(warm);
      }
      for (const auto& [k, b] : call.releases) operands[k].erase(b);
    }
  }

  const ExecutionSpace& exec_;
  redistribute::Exchange<Memory>& exchange_;
  const Graph& graph_;
  const Schedule& schedule_;
  const Options& options_;
  kernels::KernelTarget target_;
  std::map<Dtype, VendorGemmCall> vendor_gemm_;  // touched on the call with the largest workspace
  std::vector<Blocks> held_;                     // per value, the blocks this rank keeps
  std::set<int> peers_;
};

}  // namespace detail

// Local (no messages): takes from the memory space's BlockPool, touches and gives back every block one
// execution of `steps` on this rank will take, grows `exchange`'s buffers to each redistribution's needs,
// takes each kind of kernel call's temporaries and touches the vendor BLAS' packing buffers, so that execute
// then first-touches no page (docs/engine.md "Memory"). Afterwards the pool's cache and the exchange buffers
// stay allocated. Call it before loading the inputs, whose blocks then come from the cache too. The exchange
// plans it makes stay in `steps` for execute (exchange_plan). Returns the ranks this rank's steps exchange
// point-to-point messages with (prepare_messages).
template <class ExecutionSpace>
std::set<int> warm_memory(const ExecutionSpace& exec,
                          redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange, const Graph& graph,
                          const Schedule& schedule, const RankSteps& steps, const Options& options = {}) {
  detail::WarmWalk<ExecutionSpace> walk(exec, exchange, graph, schedule, options);
  walk.run(steps);
  return walk.peers();
}

// The same, computing this rank's steps.
template <class ExecutionSpace>
std::set<int> warm_memory(const ExecutionSpace& exec,
                          redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange, const Graph& graph,
                          const Schedule& schedule, const Options& options = {}) {
  return warm_memory(exec, exchange, graph, schedule, rank_steps(graph, schedule, exchange.comm().rank()), options);
}

// Collective over the exchange's communicator: makes the process mesh and every group communicator the
// schedule's transitions by collectives will use (redistribute::mesh::prepare_reshard) and runs each distinct
// sequence twice on a zero tile, so that execute creates no communicator (MPI_Cart_create, MPI_Cart_sub) and
// MPI's collectives have set up what they set up on first use inside its timed phases (MPICH's first calls of
// a collective are much slower than later ones: docs/engine.md "Memory"). Call it on every rank after
// warm_memory.
template <class ExecutionSpace>
void prepare_collectives(const ExecutionSpace& exec,
                         redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange, const Graph& graph,
                         const Schedule& schedule) {
  std::set<std::pair<std::string, Dtype>> done;  // the sequences run, by their types and dtype
  schedule.for_each_collective_transition([&](VertexId v, std::size_t, const Transition& transition) {
    const redistribute::mesh::ReshardPlan& plan = *transition.plan;
    redistribute::mesh::ProcessMesh& mesh = exchange.process_mesh(plan.mesh);
    redistribute::mesh::prepare_reshard(mesh, plan);
    const std::string key = str(plan.from, plan.mesh) + " -> " + str(plan.to, plan.mesh);
    if (!done.emplace(key, graph.vertex(v).dtype).second) return;
    dispatch_dtype(graph.vertex(v).dtype, [&](auto scalar) {
      using Block = Tensor<decltype(scalar), typename ExecutionSpace::memory_space>;
      const Block tile("einrel::engine/warm", redistribute::mesh::local_shape(plan.from, plan.mesh));
      for (int run = 0; run < 2; ++run) redistribute::mesh::execute_reshard(exec, mesh, plan, tile);
    });
  });
}

// Collective among each rank and its `peers` (warm_memory's; rank r lists q exactly when q lists r): one
// message of 64 KiB each way with every peer, so that MPI's first message between two processes is not one of
// the run's. MPICH sets up a pair's large-message path on its first use: the first 64 KiB message between two
// ranks here took 150 us, a 512 KiB one after it 75 us (docs/engine.md "Memory"). Every send leaves one buffer,
// posted to all peers first; at most `receives_at_once` messages are received at a time, each into a buffer
// freed by the last, so the buffers stay bounded (4 MiB at the default) however many peers there are (at
// R = 16 384 an all-to-all transition has 16 383), and no rank waits on a send not yet posted. Call it on every
// rank after warm_memory.
constexpr std::size_t warm_receives_at_once = 64;
inline void prepare_messages(const comm::Communicator& comm, const std::set<int>& peers,
                             std::size_t receives_at_once = warm_receives_at_once) {
  constexpr int warm_tag = 8;     // nothing else is in flight on comm while the session prepares
  constexpr int elements = 8192;  // doubles: 64 KiB, past MPICH's eager limit
  if (receives_at_once < 1) throw Error("the first messages need at least one receive buffer");
  const std::vector<double> out(elements, 0.0);  // outside the pool, whose peak is the run's
  std::vector<std::vector<double>> in(std::min(peers.size(), receives_at_once), std::vector<double>(elements));
  std::vector<MPI_Request> sends(peers.size(), MPI_REQUEST_NULL), receives(in.size(), MPI_REQUEST_NULL);
  std::size_t k = 0;
  for (int peer : peers)
    comm::check_mpi(MPI_Isend(out.data(), elements, MPI_DOUBLE, peer, warm_tag, comm.get(), &sends[k++]), "MPI_Isend");
  auto next = peers.begin();
  auto receive = [&](std::size_t buffer) {
    comm::check_mpi(
        MPI_Irecv(in[buffer].data(), elements, MPI_DOUBLE, *next++, warm_tag, comm.get(), &receives[buffer]),
        "MPI_Irecv");
  };
  for (std::size_t b = 0; b < in.size(); ++b) receive(b);
  for (int done; (done = comm::wait_any(receives, "MPI_Testany")) != MPI_UNDEFINED;)
    if (next != peers.end()) receive(static_cast<std::size_t>(done));
  comm::wait_all(sends, "MPI_Testall");
}

}  // namespace einrel::engine

#endif
