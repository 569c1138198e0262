#ifndef EINREL_RESHARD_HPP
#define EINREL_RESHARD_HPP

#include <einrel_DistType.hpp>
#include <einrel_MeshState.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace einrel::redistribute::mesh {

// The collectives of array-redistribution-collectives.txt §2.6 (multi-axis, §7.1), and the two that settle
// a pending reduction (einsum-sharding-rules.txt's Partial): reducescatter leaves each device one slice
// of dimension i of the combined array (Partial -> Shard), allreduce all of it (Partial -> Replicate).
enum class Collective { allgather, alltoall, dynslice, allpermute, reducescatter, allreduce };
std::string_view collective_name(Collective op);

// The cost of one collective in elements per device (paper Fig. 11) from the local sizes before and after it.
Extent collective_cost(Collective op, Extent before, Extent after);

// One step over the prime-factored mesh. `axes` are moved in this order (axes[0] becomes or was the
// minor-most of its dimension); `dims` is {i} for allgather, dynslice and reducescatter, {from, to} for
// alltoall, {} otherwise. `after` is the type the step leaves (allgather and alltoall first bring their
// axes to the front of the source dimension, MeshState::bring_to_front; allpermute leaves the identity
// device map). Cost in elements per device (paper Fig. 11): allgather the local size after, alltoall and
// allpermute the local size before, dynslice 0, reducescatter the local size before, allreduce twice it.
struct ReshardStep {
  Collective op = Collective::allpermute;
  std::vector<std::string> axes;
  std::vector<std::size_t> dims;
  DistType after;
  std::vector<Extent> local_shape;  // after the step
  Extent cost = 0;
};

// A synthesized redistribution (paper §7): a cheapest sequence of multi-axis collectives over the
// prime-factored mesh whose every intermediate local size is at most the larger of the source's and the
// target's (the memory height), found by Dijkstra over weak types (local shapes) with at most one
// allpermute, placed before any trailing allgathers, and axes chosen to avoid it where they can.
struct ReshardPlan {
  DeviceMesh mesh, primes;  // the user's mesh and its prime factorization
  DistType from, to;        // over `mesh`
  std::vector<ReshardStep> steps;
  Extent cost = 0, memory_height = 0, source_local_size = 0, target_local_size = 0;
  // allgather of every partitioned dimension in turn, then dynslice (paper eq. 2); an allreduce first for a
  // pending reduction
  Extent naive_cost = 0;
  double synthesis_seconds = 0;
};

// The number of devices in each group of the step's collective: the product of its axes' sizes on `primes`.
Extent group_size(const ReshardStep& step, const DeviceMesh& primes);

// The type change of one step on `state` (allgather and alltoall bring their axes to the front first; allpermute
// takes step.after); no data moves. The synthesizer's lowering, the MPI execution and reshard_volumes walk a
// plan with it.
void advance(MeshState& state, const ReshardStep& step);

// Throws Error when the global shapes differ, when the target has a pending reduction the source does not
// have over the same axes with the same ⊕, or where check_type does.
ReshardPlan synthesize_reshard(const DeviceMesh& mesh, const DistType& from, const DistType& to);

// synthesize_reshard, each problem synthesized once per process: a planner costs many schedules whose transitions
// repeat the same few pairs of types, and a synthesis visits every rank's tile. Keeps at most reshard_memo_size
// plans (all are dropped when a new one would pass it). Thread-safe.
constexpr std::size_t reshard_memo_size = 1024;
std::shared_ptr<const ReshardPlan> memoized_reshard(const DeviceMesh& mesh, const DistType& from, const DistType& to);

// The naive sequence (paper eq. 2): an allreduce of a pending reduction, then one allgather per
// partitioned dimension in order, then one dynslice per partitioned target dimension; its peak local size
// is the whole array's. What `naive_cost` counts, and the peer the synthesized sequence is measured against.
ReshardPlan naive_reshard(const DeviceMesh& mesh, const DistType& from, const DistType& to);

// Step axes written over the user's mesh: all prime factors of an axis, in order, as its name ("x"), others
// as they are ("x.1").
std::vector<std::string> user_axes(const std::vector<std::string>& prime_axes, const DeviceMesh& mesh);

// The steps in one line, each as op{axes}(dims) over the user's mesh: "alltoall{x}(0->1) allgather{y.0}(1)".
std::string steps_text(const ReshardPlan& plan);

}  // namespace einrel::redistribute::mesh

#endif
