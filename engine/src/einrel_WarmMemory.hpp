#ifndef EINREL_WARMMEMORY_HPP
#define EINREL_WARMMEMORY_HPP

#include <einrel_Contraction.hpp>
#include <einrel_Engine.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_ReshardVolumes.hpp>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace einrel::engine {

// Local (no messages): walks one execution of `schedule` on this rank in execute()'s order, taking from the
// memory space's BlockPool every block it will take (the inputs' blocks, operand copies, partial blocks,
// reduction receives),
// growing `exchange`'s buffers to each redistribution's needs, touching all of it, and giving the blocks
// back when execute would. The execution that follows then finds its blocks cached in the pool and its
// buffers allocated: no fresh pages are first-touched inside its timed phases (a fresh page costs ~2-3 ms
// per MiB on this project's machines, more than the kernels of an element-wise vertex). What stays
// allocated afterwards: the pool's cache (bounded by its limit) and the exchange buffers. Kernel
// temporaries (kernels::einsum_scratch) are taken too, once per kind of call, and the vendor BLAS' own
// packing buffers are touched by one small GEMM (kernels::warm_vendor_gemm). Call it before loading the
// inputs, whose blocks then come from the pool's cache too. ScaLAPACK-style drivers allocate their arrays
// before timing the same way.
namespace detail {

// A kernel call that reaches the vendor GEMM: its vertex, operand bounds and GEMM.
struct VendorGemmCall {
  VertexId vertex = 0;
  std::vector<Bound> bounds;
  kernels::GemmCall gemm;
};

// Per dtype, of the vendor GEMMs this rank's kernel calls make, the one with the most rows (then columns,
// then inner extent): the call whose workspace in the vendor BLAS is largest (kernels::warm_vendor_gemm).
inline std::map<Dtype, VendorGemmCall> largest_gemm_calls(const Graph& graph, const Schedule& schedule, int rank,
                                                          const kernels::KernelTarget& target) {
  std::map<Dtype, VendorGemmCall> largest;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const VertexSchedule& vs = schedule.vertex(v);
    std::set<std::vector<Bound>> calls;
    const auto [first, last] = vs.tuples_of(rank);
    for (Extent t = first; t < last; ++t) calls.insert(vs.tuple_bounds(t));
    for (const std::vector<Bound>& bounds : calls) {
      const auto gemm = kernels::vendor_gemm_call(resolve(vertex.resolved->einsum(), bounds),
                                                  {vertex.dtype, target.threads, target.host});
      if (!gemm) continue;
      const auto kept = largest.find(vertex.dtype);
      if (kept == largest.end() ||
          std::tie(gemm->rows, gemm->cols, gemm->inner) >
              std::tie(kept->second.gemm.rows, kept->second.gemm.cols, kept->second.gemm.inner))
        largest[vertex.dtype] = {v, bounds, *gemm};
    }
  }
  return largest;
}

}  // namespace detail

template <class ExecutionSpace>
void warm_memory(const ExecutionSpace& exec, redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange,
                 const Graph& graph, const Schedule& schedule, const EngineOptions& options = {}) {
  using Memory = typename ExecutionSpace::memory_space;
  const int rank = exchange.comm().rank();
  std::vector<std::map<Extent, AnyTensor<Memory>>> held(graph.size());  // per value, the blocks this rank keeps
  Lifetimes lifetimes(schedule);
  const kernels::KernelTarget target{Dtype::f64, exec.concurrency(),
                                     Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible};
  // Touched on the blocks of the call with the largest workspace, when the walk reaches it.
  std::map<Dtype, detail::VendorGemmCall> vendor_gemm = detail::largest_gemm_calls(graph, schedule, rank, target);
  // The inputs' blocks first, released as execute releases them: the caller loads its inputs after this
  // walk, into these blocks (then cached), and the walk allocates what execute will, no more.
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (!vertex.is_input()) continue;
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using Block = Tensor<decltype(scalar), Memory>;
      const BlockGrid& grid = schedule.layout(v).grid();
      for (Extent b : schedule.layout(v).blocks_of(rank)) {
        Block block = Block::uninitialized(vertex.name + "/warm", grid.box(grid.key(b)).extents());
        Kokkos::deep_copy(exec, block.view(), decltype(scalar)(0));
        held[v].emplace(b, block);
      }
    });
  }
  for (VertexId v : lifetimes.unread_inputs(graph)) held[v].clear();

  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const VertexSchedule& vs = schedule.vertex(v);
    const BlockGrid& out = vs.output_layout().grid();
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using S = decltype(scalar);
      using Block = Tensor<S, Memory>;
      auto take = [&](const Bound& bound) {
        Block b = Block::uninitialized(vertex.name + "/warm", bound);
        Kokkos::deep_copy(exec, b.view(), S(0));
        return b;
      };
      // Per operand, by block id: copies, and producer blocks they share (kept alive as in execute).
      std::vector<std::map<Extent, AnyTensor<Memory>>> operands(vertex.inputs.size());
      for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
        if (schedule.shared_operand(v, k)) continue;
        const VertexId in = vertex.inputs[k];
        const redistribute::BlockLayout &from = schedule.layout(in), &to = vs.operand_layout(k);
        const Transition& transition = schedule.transition(v, k);
        const bool collectives = transition.path == TransitionPath::collectives;
        for (Extent b : to.blocks_of(rank)) {
          if (collectives ? !keeps_source_tile(transition, rank)
                          : !(from.grid() == to.grid() && from.placement().holds(rank, b)))
            operands[k].emplace(b, take(to.grid().box(to.grid().key(b)).extents()));
          else if (held[in].count(b))
            operands[k].emplace(b, held[in].at(b));
        }
        if (collectives) {  // the sequence's temporaries, taken while its result is
          std::vector<Block> scratch;
          for (Extent n : redistribute::reshard_scratch(*transition.plan)) scratch.push_back(take({n}));
        } else {
          exchange.prepare(exec, redistribute::RedistributionPlan(from, to, rank, sizeof(S), options.limits),
                           sizeof(S));
        }
      }
      // In place, the first operand's blocks (shared with its producer: same grid, same block ids) become
      // the output's.
      const std::map<Extent, AnyTensor<Memory>> first_operand =
          schedule.in_place(v) ? held[vertex.inputs[0]] : std::map<Extent, AnyTensor<Memory>>{};
      for (VertexId in : lifetimes.read_operands(vertex)) held[in].clear();
      std::map<Extent, Block> partials;
      const auto [first, last] = vs.tuples_of(rank);
      // Each kernel call's temporaries, taken while the call's partial is and given back after it, as
      // execute does for every call (the pool may hand a freed temporary to the next call's partial, which
      // then needs a temporary of its own); their sizes are computed once per kind of call.
      std::map<std::pair<std::vector<Bound>, bool>, std::vector<Extent>> calls;
      for (Extent t = first; t < last; ++t) {
        const Extent g = vs.output_block(t);
        const bool accumulate = partials.count(g) > 0;
        if (!accumulate)
          partials.emplace(
              g, schedule.in_place(v) ? std::get<Block>(first_operand.at(g)) : take(out.box(out.key(g)).extents()));
        auto call = calls.find({vs.tuple_bounds(t), accumulate});
        if (call == calls.end())
          call = calls
                     .emplace(std::pair{vs.tuple_bounds(t), accumulate},
                              kernels::einsum_scratch(resolve(vertex.resolved->einsum(), vs.tuple_bounds(t)),
                                                      accumulate, {vertex.dtype, target.threads, target.host}))
                     .first;
        std::vector<Block> scratch;
        for (Extent n : call->second) scratch.push_back(take({n}));
        const auto warm = vendor_gemm.find(vertex.dtype);
        if (warm != vendor_gemm.end() && warm->second.vertex == v && warm->second.bounds == call->first.first) {
          auto data = [&](std::size_t k) -> const S* {  // operand k's block of tuple t
            const auto& blocks = operands[schedule.shared_operand(v, k).value_or(k)];
            const auto found = blocks.find(vs.operand_block(k, t));
            return found == blocks.end() ? nullptr : std::get<Block>(found->second).view().data();
          };
          const kernels::GemmCall& gemm = warm->second.gemm;
          if (const S* a = data(gemm.swapped), *b = data(!gemm.swapped); a && b)
            kernels::warm_vendor_gemm<ExecutionSpace, S, Memory>(exec, gemm, a, b, partials.at(g).view().data());
          vendor_gemm.erase(warm);
        }
      }
      operands.clear();
      std::vector<Block> incoming;
      for (Extent g : vs.output_layout().blocks_of(rank))
        for (std::size_t i = 1; i < vs.contributors(g).size() && !schedule.deferred(v); ++i)
          incoming.push_back(take(out.box(out.key(g)).extents()));
      for (const auto& [g, block] : partials)  // the owner's, or every partial when the reduction is deferred
        if (schedule.deferred(v) || vs.tuple_rank(g * vs.group_size()) == rank) held[v].emplace(g, block);
    });
    if (lifetimes.dead(v)) held[v].clear();
  }
  compat::fence(exec, "einrel::engine: memory warmed");
}

// Collective over the exchange's communicator: makes the process mesh and every group communicator the
// schedule's transitions by collectives will use (redistribute::prepare_reshard) and runs each distinct
// sequence twice on a zero tile, so that execute creates no communicator (MPI_Cart_create, MPI_Cart_sub) and
// MPI's collectives have set up what they set up on first use inside its timed phases: MPICH's
// MPI_Reduce_scatter_block of 512 KiB on 2 ranks here takes 3.7 ms, then 1.1 ms, then 0.05–0.08 ms per call
// (its temporary buffers and shared-memory paths are touched in the first calls). Call it on every rank
// after warm_memory.
template <class ExecutionSpace>
void prepare_collectives(const ExecutionSpace& exec,
                         redistribute::Exchange<typename ExecutionSpace::memory_space>& exchange, const Graph& graph,
                         const Schedule& schedule) {
  std::set<std::pair<std::string, Dtype>> done;  // the sequences run, by their types and dtype
  schedule.for_each_collective_transition([&](VertexId v, std::size_t, const Transition& transition) {
    const redistribute::ReshardPlan& plan = *transition.plan;
    redistribute::ProcessMesh& mesh = exchange.process_mesh(plan.mesh);
    redistribute::prepare_reshard(mesh, plan);
    const std::string key = str(plan.from, plan.mesh) + " -> " + str(plan.to, plan.mesh);
    if (!done.emplace(key, graph.vertex(v).dtype).second) return;
    dispatch_dtype(graph.vertex(v).dtype, [&](auto scalar) {
      using Block = Tensor<decltype(scalar), typename ExecutionSpace::memory_space>;
      const Block tile("einrel::engine/warm", redistribute::local_shape(plan.from, plan.mesh));
      for (int run = 0; run < 2; ++run) redistribute::execute_reshard(exec, mesh, plan, tile);
    });
  });
}

}  // namespace einrel::engine

#endif
