#ifndef EINREL_PLANCHOICE_HPP
#define EINREL_PLANCHOICE_HPP

#include <einrel_Carried.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_Graph.hpp>
#include <einrel_Options.hpp>
#include <einrel_Planner.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Traffic.hpp>
#include <einrel_Transition.hpp>

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <string>

namespace einrel::engine {

// A plan, the transition policy to schedule it with, and its dry run on the ranks it was planned for under
// that policy (the dry run the plan is costed by; the pipeline and the plan command reuse it).
struct FittedPlan {
  partition::Plan plan;
  TransitionPolicy transitions = TransitionPolicy::automatic;
  Traffic dry_run;
};

// The schedule of `partitions` on `ranks` ranks as `options` say (transitions `policy`, input reads, the
// scheduling model): the one way the pipeline, the plan command and the planning's dry runs make it.
Schedule make_schedule(const Graph& graph, const std::vector<partition::PartitionVector>& partitions, int ranks,
                       TransitionPolicy policy, const Options& options, const partition::Carried& carried = {});

// The plan to run on `ranks` ranks, as `options` ask (procs, planner, cost_model, transitions,
// memory_limit, comm_buffer_limit); with `carried` pairs (a step graph run again and again), each plan's
// carried vertices re-chosen by partition::plan_carried and its schedule keeping them where they are read.
// Without a memory limit: make_plan as requested. With `memory_limit` (bytes
// per rank, as the run report's peak_allocated_bytes counts them, estimated by the dry run, the one
// estimator: Traffic::peak_memory_bytes): the requested plan if its busiest rank fits; else, with automatic
// transitions, the same plan with point-to-point only, then with collectives wherever they apply; else, of
// every planner's plan at p, 2p and 4p (each under those policies), the one of least predicted cost that fits
// (ties: that order, requested planner first) — a heuristic on top of the planners (docs/planner.md "Memory
// limit"). Throws Error when none fits, naming the plan that comes closest, its rank and vertex, and the
// bytes missing.
FittedPlan choose_plan(const Graph& graph, int ranks, const Options& options, const partition::Carried& carried = {});

// The memory this host can still give out: MemAvailable of /proc/meminfo, else the free physical pages.
std::size_t available_host_memory();

// The free memory of the CUDA device this process uses (cudaMemGetInfo) and its number; nullopt without
// the Cuda backend.
struct DeviceMemory {
  int device = 0;
  std::size_t free_bytes = 0;
};
std::optional<DeviceMemory> available_cuda_memory();

// Collective over comm: throws Error on every rank, before anything is allocated, when the ranks that share
// a node (MPI_COMM_TYPE_SHARED) together need more than available_host_memory() there, each rank needing
// `estimate` bytes (its dry-run peak_memory_bytes); with `device`, when the ranks that share a node and a
// CUDA device need more than available_cuda_memory() (no check where that is nullopt). The message gives
// the bytes needed and available.
void check_node_memory(MPI_Comm comm, std::size_t estimate, bool device = false);

}  // namespace einrel::engine

#endif
