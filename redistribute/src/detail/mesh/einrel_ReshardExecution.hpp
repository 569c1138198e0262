#ifndef EINREL_RESHARDEXECUTION_HPP
#define EINREL_RESHARDEXECUTION_HPP

#include <einrel_BoxCopy.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_MpiMemory.hpp>
#include <einrel_ProcessMesh.hpp>
#include <einrel_Reshard.hpp>
#include <einrel_SplitCollectives.hpp>
#include <einrel_Tensor.hpp>
#include <einrel_Wait.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <climits>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace einrel::redistribute::mesh {

// Called on every rank with a step's index as execute_reshard starts the step.
using StepHook = std::function<void(std::size_t)>;

namespace detail {

inline MPI_Op mpi_op(AggOp op) {
  switch (op) {
    case AggOp::sum:
      return MPI_SUM;
    case AggOp::max:
      return MPI_MAX;
    case AggOp::min:
      return MPI_MIN;
    case AggOp::prod:
      return MPI_PROD;
  }
  return MPI_SUM;
}

// `count` consecutive tiles of bound `tile` in one buffer: tile k is elements [k·|tile|, (k+1)·|tile|).
template <class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> slot(const Tensor<Scalar, MemorySpace>& buffer, const Bound& tile, int k) {
  const auto n = static_cast<std::size_t>(num_elements(tile));
  return Tensor<Scalar, MemorySpace>(tile, Kokkos::subview(buffer.view(), std::make_pair(k * n, (k + 1) * n)));
}

// Whether the pieces of a tensor of bound `b` cut along dimension i are contiguous (every dimension before i
// has extent 1), so that MPI can read or write them in place.
inline bool contiguous_slabs(const Bound& b, std::size_t i) {
  for (std::size_t d = 0; d < i; ++d)
    if (b[d] != 1) return false;
  return true;
}

inline bool in_position_order(const MeshGroup& g) {
  for (std::size_t k = 0; k < g.position_of.size(); ++k)
    if (g.position_of[k] != static_cast<int>(k)) return false;
  return true;
}

inline std::vector<Extent> with(std::vector<Extent> v, std::size_t i, Extent value) {
  v[i] = value;
  return v;
}

// One of MPI's reductions: `blocking()` (returning its MPI error code), or `nonblocking(&request)` waited for
// by einrel's yielding wait when ranks oversubscribe a node (ProcessMesh::blocking_reductions).
template <class Blocking, class Nonblocking>
void reduction(const ProcessMesh& mesh, Blocking&& blocking, Nonblocking&& nonblocking, const std::string& call) {
  if (mesh.blocking_reductions()) {
    comm::check_mpi(blocking(), call);
  } else {
    MPI_Request request;
    comm::complete(nonblocking(&request), request, call);
  }
}

// The group communicator of a collective step in `state` (allgather and alltoall first bring their axes to
// the front of the source dimension), or nothing for a step without one (dynslice, allpermute). Collective
// over mesh.comm() the first time a group is asked for.
inline const MeshGroup* step_group(ProcessMesh& mesh, MeshState& state, const ReshardStep& step) {
  switch (step.op) {
    case Collective::allgather:
    case Collective::alltoall:
      state.bring_to_front(step.dims[0], step.axes);
      return &mesh.group(state, step.axes);
    case Collective::reducescatter:
    case Collective::allreduce:
      return &mesh.group(state, step.axes);
    default:
      return nullptr;
  }
}

// What one step of run_steps works with: the step, its group (step_group), this rank, the group's size,
// `ready`, the agreement on failure that the step calls once its buffers are allocated and before its first
// MPI call, and the most elements per member of one MPI call (split_allgather and the others).
template <class ExecutionSpace>
struct StepContext {
  const ExecutionSpace& exec;
  ProcessMesh& mesh;
  const MeshState& state;
  const ReshardStep& step;
  const MeshGroup* group;
  int me;
  Extent n;
  const std::function<void()>& ready;
  Extent chunk;
};

// Each collective on the rank's tile, returning the new tile.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> allgather_step(const StepContext<ExecutionSpace>& c,
                                           const Tensor<Scalar, MemorySpace>& tile) {
  using T = Tensor<Scalar, MemorySpace>;
  const Bound shape = tile.bound();
  const std::size_t i = c.step.dims[0];
  const MeshGroup& g = *c.group;
  const MPI_Datatype type = comm::mpi_datatype<Scalar>();
  T out = T::uninitialized("einrel::reshard/tile", with(shape, i, shape[i] * c.n));
  // gathered straight into place when the tiles are slabs of the result in rank order
  const bool direct = contiguous_slabs(shape, i) && in_position_order(g);
  const T gathered =
      direct ? T(Bound{out.size()}, out.view()) : T::uninitialized("einrel::reshard/gathered", {c.n * tile.size()});
  c.ready();
  split_allgather(tile.view().data(), tile.size(), gathered.view().data(), type, g.comm.get(), c.chunk);
  for (int k = 0; k < static_cast<int>(c.n) && !direct; ++k)
    einrel::copy_box(c.exec, slot(gathered, shape, k), std::vector<Extent>(shape.size(), 0), out,
                     with(std::vector<Extent>(shape.size(), 0), i, g.position_of[k] * shape[i]), shape);
  return out;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> dynslice_step(const StepContext<ExecutionSpace>& c,
                                          const Tensor<Scalar, MemorySpace>& tile) {
  using T = Tensor<Scalar, MemorySpace>;
  const Bound shape = tile.bound();
  const std::size_t i = c.step.dims[0];
  const Bound piece = with(shape, i, shape[i] / c.n);
  T out = T::uninitialized("einrel::reshard/tile", piece);
  einrel::copy_box(c.exec, tile,
                   with(std::vector<Extent>(shape.size(), 0), i, c.state.position(c.me, c.step.axes) * piece[i]), out,
                   std::vector<Extent>(shape.size(), 0), piece);
  c.ready();  // no MPI: agreed so that a failure here is not met in the next step's collective
  return out;
}

// What a rank sends to its group, member by member: the tile cut along dimension d into pieces of `piece`, the
// piece at offset p for the member at position p — the tile itself when those pieces are already slabs in
// member order, else a packed copy. Fenced.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> packed_for_members(const StepContext<ExecutionSpace>& c,
                                               const Tensor<Scalar, MemorySpace>& tile, const Bound& piece,
                                               std::size_t d) {
  using T = Tensor<Scalar, MemorySpace>;
  const MeshGroup& g = *c.group;
  const std::vector<Extent> origin(piece.size(), 0);
  const bool direct = contiguous_slabs(tile.bound(), d) && in_position_order(g);
  const T send = direct ? T(Bound{tile.size()}, tile.view()) : T::uninitialized("einrel::reshard/send", {tile.size()});
  for (int k = 0; k < static_cast<int>(c.n) && !direct; ++k)
    einrel::copy_box(c.exec, tile, with(origin, d, g.position_of[k] * piece[d]), slot(send, piece, k), origin, piece);
  compat::fence(c.exec, "einrel::reshard: packed");
  return send;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> alltoall_step(const StepContext<ExecutionSpace>& c,
                                          const Tensor<Scalar, MemorySpace>& tile) {
  using T = Tensor<Scalar, MemorySpace>;
  const Bound shape = tile.bound();
  const std::size_t i = c.step.dims[0], j = c.step.dims[1];
  const MeshGroup& g = *c.group;
  const MPI_Datatype type = comm::mpi_datatype<Scalar>();
  const int parts = static_cast<int>(c.n);
  const Bound piece = with(shape, j, shape[j] / c.n);
  T out = T::uninitialized("einrel::reshard/tile", with(piece, i, shape[i] * c.n));
  // received into place when the pieces are slabs in rank order
  const bool direct_receive = contiguous_slabs(out.bound(), i) && in_position_order(g);
  const T receive =
      direct_receive ? T(Bound{out.size()}, out.view()) : T::uninitialized("einrel::reshard/receive", {tile.size()});
  const T send = packed_for_members(c, tile, piece, j);  // to the member at position p: piece p along j
  c.ready();
  split_alltoall(send.view().data(), num_elements(piece), receive.view().data(), type, g.comm.get(), c.chunk);
  for (int k = 0; k < parts && !direct_receive; ++k)  // from the member at position p: its place p along i
    einrel::copy_box(c.exec, slot(receive, piece, k), std::vector<Extent>(shape.size(), 0), out,
                     with(std::vector<Extent>(shape.size(), 0), i, g.position_of[k] * shape[i]), piece);
  return out;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> reducescatter_step(const StepContext<ExecutionSpace>& c,
                                               const Tensor<Scalar, MemorySpace>& tile) {
  using T = Tensor<Scalar, MemorySpace>;
  const std::size_t i = c.step.dims[0];
  const MeshGroup& g = *c.group;
  const MPI_Datatype type = comm::mpi_datatype<Scalar>();
  const Bound piece = with(tile.bound(), i, tile.bound()[i] / c.n);
  const T send = packed_for_members(c, tile, piece, i);
  T out = T::uninitialized("einrel::reshard/tile", piece);
  const Extent m = num_elements(piece);
  const MPI_Op op = mpi_op(c.state.type().partial_op);
  // Split (m past the chunk): the part at one offset of every member's slot packed together for each call.
  const bool split = m > c.chunk;
  const T parts = split ? T::uninitialized("einrel::reshard/parts", {c.n, c.chunk}) : T();
  c.ready();
  for_each_chunk(m, split ? c.chunk : m, [&](Extent offset, int count) {
    const Scalar* from = send.view().data();
    if (split) {
      const T packed(
          Bound{c.n, Extent{count}},
          Kokkos::subview(parts.view(), std::make_pair(std::size_t{0}, static_cast<std::size_t>(c.n * count))));
      einrel::copy_box(c.exec, T(Bound{c.n, m}, send.view()), {0, offset}, packed, {0, 0}, packed.bound());
      compat::fence(c.exec, "einrel::reshard: parts packed");
      from = parts.view().data();
    }
    Scalar* into = out.view().data() + offset;
    reduction(
        c.mesh, [&] { return MPI_Reduce_scatter_block(from, into, count, type, op, g.comm.get()); },
        [&](MPI_Request* r) { return MPI_Ireduce_scatter_block(from, into, count, type, op, g.comm.get(), r); },
        "MPI_Reduce_scatter_block");
  });
  return out;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> allreduce_step(const StepContext<ExecutionSpace>& c,
                                           const Tensor<Scalar, MemorySpace>& tile) {
  using T = Tensor<Scalar, MemorySpace>;
  const MeshGroup& g = *c.group;
  const MPI_Datatype type = comm::mpi_datatype<Scalar>();
  T out = T::uninitialized("einrel::reshard/tile", tile.bound());  // the caller's tile is only read
  const MPI_Op op = mpi_op(c.state.type().partial_op);
  c.ready();
  for_each_chunk(tile.size(), c.chunk, [&](Extent offset, int count) {
    const Scalar* from = tile.view().data() + offset;
    Scalar* into = out.view().data() + offset;
    reduction(
        c.mesh, [&] { return MPI_Allreduce(from, into, count, type, op, g.comm.get()); },
        [&](MPI_Request* r) { return MPI_Iallreduce(from, into, count, type, op, g.comm.get(), r); }, "MPI_Allreduce");
  });
  return out;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> allpermute_step(const StepContext<ExecutionSpace>& c,
                                            const Tensor<Scalar, MemorySpace>& tile) {
  using T = Tensor<Scalar, MemorySpace>;
  const MPI_Datatype type = comm::mpi_datatype<Scalar>();
  const int me = c.me;
  const std::vector<int> source = c.state.permutation_sources(c.step.after);
  int dest = me;
  for (int r = 0; r < c.state.ranks(); ++r)
    if (source[r] == me && r != me) dest = r;
  const T out = source[me] != me ? T::uninitialized("einrel::reshard/tile", tile.bound()) : T();
  c.ready();
  split_exchange(tile.view().data(), out.view().data(), tile.size(), dest != me ? dest : MPI_PROC_NULL,
                 source[me] != me ? source[me] : MPI_PROC_NULL, type, c.mesh.comm().get(), c.chunk);
  return source[me] != me ? out : tile;
}

// The steps of `plan` on this rank's tile, memory the host can read (MPI reads and writes it).
template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> run_steps(const ExecutionSpace& exec, ProcessMesh& mesh, const ReshardPlan& plan,
                                      Tensor<Scalar, MemorySpace> tile, const StepHook& before_step, Extent chunk) {
  MeshState state(mesh.primes(), prime_factored(plan.from, plan.mesh));
  const int me = mesh.comm().rank();
  for (std::size_t index = 0; index < plan.steps.size(); ++index) {
    const ReshardStep& step = plan.steps[index];
    // Each step agrees on failure once its buffers are allocated and before its first MPI call (ready()):
    // a rank that fails preparing it (an allocation, the hook) makes every rank throw its message there,
    // instead of leaving the others in a collective it will never enter.
    // The step's group first: creating its communicator (unless prepare_reshard did) is collective over the
    // mesh, so every rank gets there before anything that may fail.
    const MeshGroup* const group = step_group(mesh, state, step);
    bool agreed = false;
    const std::function<void()> ready = [&] {
      agreed = true;  // set first: a failure elsewhere throws from this very agreement
      comm::agree_on_failure(mesh.comm(), std::nullopt);
    };
    try {
      if (before_step) before_step(index);
      compat::fence(exec, "einrel::reshard: before a collective");
      const StepContext<ExecutionSpace> c{exec,  mesh, state, step, group, me, group_size(step, mesh.primes()),
                                          ready, chunk};
      switch (step.op) {
        case Collective::allgather:
          tile = allgather_step(c, tile);
          break;
        case Collective::dynslice:
          tile = dynslice_step(c, tile);
          break;
        case Collective::alltoall:
          tile = alltoall_step(c, tile);
          break;
        case Collective::reducescatter:
          tile = reducescatter_step(c, tile);
          break;
        case Collective::allreduce:
          tile = allreduce_step(c, tile);
          break;
        case Collective::allpermute:
          tile = allpermute_step(c, tile);
          break;
      }
    } catch (const std::exception& e) {
      if (agreed) throw;  // every rank passed ready(): an MPI error, already everyone's to handle
      comm::agree_on_failure(mesh.comm(), std::string(*e.what() ? e.what() : "unknown failure"));
    }
    advance(state, step);
  }
  compat::fence(exec, "einrel::reshard: done");
  return tile;
}

}  // namespace detail

// Collective over mesh.comm(): creates the group communicators that executing `plan` will use (kept by the
// mesh), so that execute_reshard creates none inside a timed region.
inline void prepare_reshard(ProcessMesh& mesh, const ReshardPlan& plan) {
  MeshState state(mesh.primes(), prime_factored(plan.from, plan.mesh));
  for (const ReshardStep& step : plan.steps) {
    detail::step_group(mesh, state, step);
    advance(state, step);
  }
}

// Collective over mesh.comm(): runs `plan` (synthesized for mesh.mesh()) on this rank's tile of plan.from
// (its local shape; the tile of the rank's mesh coordinates), which it only reads, and returns its tile of
// plan.to. Each step
// is one MPI collective on its group's communicator (ProcessMesh::group): allgather MPI_Iallgather, then
// the gathered tiles placed along their dimension; alltoall MPI_Ialltoall of the pieces along the target
// dimension, packed contiguous; dynslice a local copy; reducescatter MPI_(I)reduce_scatter_block and
// allreduce MPI_(I)allreduce with the pending ⊕ (blocking unless ranks oversubscribe a node:
// ProcessMesh::blocking_reductions); allpermute one MPI_Isend/MPI_Irecv pair per rank that
// moves. A call of more than `max_message_elements` elements per member (1 to INT_MAX; MPI counts are int) is
// split into calls of at most that many, in order (einrel_SplitCollectives.hpp): tiles past 2^31 elements run on
// any MPI 3 library, and tests run the split path on small tiles. Memory the host cannot read is staged through a
// host copy of the tile unless MPI is GPU-aware.
// Failures are agreed on at every step (ready() in run_steps): an exception on one rank while a step is
// prepared, or from `before_step(k)` (called on every rank as step k starts: the engine's test-only failure
// injection), is thrown with its message on every rank.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Tensor<Scalar, MemorySpace> execute_reshard(const ExecutionSpace& exec, ProcessMesh& mesh, const ReshardPlan& plan,
                                            const Tensor<Scalar, MemorySpace>& tile, const StepHook& before_step = {},
                                            Extent max_message_elements = INT_MAX) {
  detail::check_chunk(max_message_elements);
  if (!(mesh.mesh() == plan.mesh)) throw Error("the plan was synthesized for the mesh " + plan.mesh.str());
  if (tile.bound() != local_shape(plan.from, plan.mesh))
    throw Error("the tile " + to_string(tile.bound()) + " is not the local shape of " + str(plan.from, plan.mesh));
  if constexpr (comm::mpi_reads_directly<MemorySpace>) {
    return detail::run_steps(exec, mesh, plan, tile, before_step, max_message_elements);
  } else {
    using Host = Tensor<Scalar, Kokkos::HostSpace>;
    const Host staged = Host::uninitialized("einrel::reshard/host", tile.bound());
    Kokkos::deep_copy(exec, staged.view(), tile.view());
    const Host done =
        detail::run_steps(Kokkos::DefaultHostExecutionSpace{}, mesh, plan, staged, before_step, max_message_elements);
    const auto out = Tensor<Scalar, MemorySpace>::uninitialized("einrel::reshard/tile", done.bound());
    Kokkos::deep_copy(exec, out.view(), done.view());
    compat::fence(exec, "einrel::reshard: staged back");
    return out;
  }
}

}  // namespace einrel::redistribute::mesh

#endif
