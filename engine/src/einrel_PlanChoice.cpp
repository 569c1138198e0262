#include <einrel_DryRun.hpp>
#include <einrel_Error.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_ShapeAligned.hpp>

#include <einrel_Communicator.hpp>

#include <Kokkos_Macros.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace einrel::engine {

Schedule make_schedule(const Graph& graph, const std::vector<partition::PartitionVector>& partitions, int ranks,
                       TransitionPolicy policy, const Options& options, const partition::Carried& carried) {
  return Schedule(graph, partitions, ranks, policy, options.scheduling_model(), carried, options.input_reads);
}

namespace {

// Whether objective value a beats b by more than 0.01 %, below what the model can tell apart (a kernel call's
// own cost, call_seconds, is such a difference between plans whose calls do the same work): a tie keeps the
// earlier candidate, or goes to the smaller peak.
bool better(double a, double b) { return a < b - 1e-4 * std::abs(b); }

// Plans and their dry runs on `ranks` ranks under the options' transitions, input reads and machine.
class PlanCosting {
 public:
  PlanCosting(const Graph& graph, int ranks, const Options& options, const partition::Carried& carried)
      : graph_(graph), ranks_(ranks), options_(options), carried_(carried) {}

  partition::Plan make(Extent p, const std::string& planner, partition::CostModel model) const {
    partition::Plan plan = partition::make_plan(graph_, p, planner, model);
    if (!carried_.empty()) partition::plan_carried(graph_, plan, carried_);
    return plan;
  }
  Traffic dry_run(const partition::Plan& plan, TransitionPolicy policy) const {
    return engine::dry_run(graph_, make_schedule(graph_, plan.partitions, ranks_, policy, options_, carried_),
                           options_.exchange_limits());
  }
  double objective(const partition::Plan& plan, const Traffic& dry) const {
    switch (options_.objective) {
      case Objective::makespan:
        return dry.estimated_seconds();
      case Objective::floats:
        return static_cast<double>(dry.total_floats_moved());
      case Objective::model:
        return plan.total_cost;
    }
    return 0;
  }

  // EinDecomp's choice: of its dynamic program's plans (under the engine and the paper models) and the
  // baselines' plans for this graph, the one its dry run finds best by the objective. The dynamic program is
  // exact for its decomposable model on trees; the dry run is the engine itself. A tie (equal up to
  // rounding: plans that differ only where nothing moves) goes to the least peak block bytes on the busiest
  // rank, then to the order above.
  FittedPlan eindecomp(Extent p) const {
    std::vector<partition::Plan> candidates{make(p, "eindecomp", options_.cost_model),
                                            make(p, "eindecomp", partition::CostModel::paper)};
    for (const std::string& name : partition::planners_for(graph_))
      if (name != "eindecomp") candidates.push_back(make(p, name, options_.cost_model));
    if (streams_inputs())
      for (Extent finer : {2 * p, 4 * p})
        for (partition::CostModel model : {options_.cost_model, partition::CostModel::paper})
          candidates.push_back(make(finer, "eindecomp", model));
    std::vector<std::string> aligned(candidates.size());  // how a candidate was cut along the block shapes
    if (partition::has_block_shapes(graph_)) {
      const std::size_t base = candidates.size();
      for (Extent coarsen : {1, 2, 4, 8})
        for (std::size_t c = 0; c < base; ++c) {
          partition::Plan plan = candidates[c];
          plan.partitions = partition::shape_aligned(graph_, plan.partitions, coarsen);
          candidates.push_back(std::move(plan));
          aligned.push_back(", cut along the block shapes" +
                            (coarsen > 1 ? " (" + std::to_string(coarsen) + " blocks in one)" : std::string()));
        }
    }
    std::vector<double> value, peak;
    std::vector<Traffic> dries;
    std::vector<std::size_t> dry_of;  // per candidate, its dry run in `dries`
    std::size_t considered = 0;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const partition::Plan& plan = candidates[c];
      considered += plan.partitions_considered;
      std::size_t same = 0;  // an earlier candidate with the same partitions has the same dry run
      while (same < c && !(candidates[same].partitions == plan.partitions)) ++same;
      if (same < c) {
        value.push_back(value[same]);
        peak.push_back(peak[same]);
        dry_of.push_back(dry_of[same]);
        continue;
      }
      dries.push_back(dry_run(plan, options_.transitions));
      dry_of.push_back(dries.size() - 1);
      value.push_back(objective(plan, dries.back()));
      std::size_t most = 0;
      for (const RankTraffic& r : dries.back().ranks) most = std::max(most, r.peak_block_bytes);
      peak.push_back(static_cast<double>(most));
    }
    const double least = *std::min_element(value.begin(), value.end());
    std::size_t best = candidates.size();
    for (std::size_t c = 0; c < candidates.size(); ++c)
      if (!better(least, value[c]) && (best == candidates.size() || better(peak[c], peak[best]))) best = c;
    partition::Plan chosen = std::move(candidates[best]);
    chosen.proposed_by = chosen.planner;
    if (chosen.planner == "eindecomp" && chosen.cost_model == partition::CostModel::paper)
      chosen.proposed_by = "eindecomp (paper model)";
    if (chosen.procs != p) chosen.proposed_by += " at p = " + std::to_string(chosen.procs);
    chosen.proposed_by += aligned[best];
    chosen.planner = "eindecomp";
    chosen.cost_model = options_.cost_model;
    chosen.partitions_considered = considered;
    return {std::move(chosen), options_.transitions, std::move(dries[dry_of[best]])};
  }

  // Whether EinDecomp also weighs finer partitions (p = 2R and 4R, when p is not given): on more than one rank,
  // where some graph input could be streamed (Schedule::streamed: InputReads::again, one reading edge, no
  // output). A rank then holds a share of such an input's blocks at a time instead of all it reads; with calls
  // that stay compute-bound the estimate is the same and the tie goes to the smaller peak. On one rank the
  // plan stays one block per vertex, each vertex one kernel call on whole operands (a memory limit still
  // finds finer plans).
  bool streams_inputs() const {
    if (ranks_ < 2 || options_.procs) return false;
    const std::vector<bool> streamed = streamed_inputs(graph_, options_.input_reads, carried_);
    return std::find(streamed.begin(), streamed.end(), true) != streamed.end();
  }

  // The requested plan under the options' transitions, with its dry run.
  FittedPlan requested(Extent p, const std::string& planner) const {
    if (planner == "eindecomp" && options_.cost_model == partition::CostModel::engine &&
        options_.objective != Objective::model)
      return eindecomp(p);
    partition::Plan plan = make(p, planner, options_.cost_model);
    Traffic dry = dry_run(plan, options_.transitions);
    return {std::move(plan), options_.transitions, std::move(dry)};
  }

 private:
  const Graph& graph_;
  int ranks_;
  const Options& options_;
  const partition::Carried& carried_;
};

// Under the engine model, the plan's costs are its dry run's: per vertex the floats moved to place its
// operands (join: repartitions included) and its partial results (agg), and the estimated seconds.
void cost_by_dry_run(const Graph& graph, partition::Plan& plan, const Traffic& dry, Objective objective) {
  plan.estimated_seconds = dry.estimated_seconds();
  if (plan.cost_model != partition::CostModel::engine || objective == Objective::model) return;
  plan.costed_by_dry_run = true;
  plan.total_cost = static_cast<double>(dry.total_floats_moved());
  for (VertexId v = 0; v < graph.size(); ++v)
    if (!graph.vertex(v).is_input())
      plan.costs[v] = {static_cast<double>(dry.floats_moved[v] - dry.partials_moved[v]),
                       static_cast<double>(dry.partials_moved[v]), 0.0};
}

// The requested plan if its busiest rank fits options.memory_limit (or there is none); else, with automatic
// transitions, the same plan with point-to-point only, then with collectives wherever they apply; else, of
// every planner's plan at p, 2p and 4p (each under those policies), the best by the objective that fits.
FittedPlan fit_memory(const Graph& graph, int ranks, const Options& options, FittedPlan requested,
                      const PlanCosting& costing) {
  const std::optional<std::size_t>& memory_limit = options.memory_limit;
  if (!memory_limit) return requested;
  struct Estimate {
    std::size_t peak = 0;
    int rank = 0;
    VertexId vertex = 0;
    double objective = 0;
    Traffic dry;
  };
  auto estimate = [&](const partition::Plan& plan, TransitionPolicy policy) {
    Estimate e;
    e.dry =
        &plan == &requested.plan && policy == requested.transitions ? requested.dry_run : costing.dry_run(plan, policy);
    for (int r = 0; r < ranks; ++r)
      if (e.dry.peak_memory_bytes[r] > e.peak)
        e.peak = e.dry.peak_memory_bytes[r], e.rank = r, e.vertex = e.dry.peak_vertex[r];
    e.objective = costing.objective(plan, e.dry);
    return e;
  };
  std::vector<TransitionPolicy> policies{options.transitions};
  if (options.transitions == TransitionPolicy::automatic)
    policies.insert(policies.end(), {TransitionPolicy::point_to_point, TransitionPolicy::collectives});
  // The first policy under which `plan` fits with its estimate, else nothing; `closest` keeps the smallest miss.
  std::optional<Estimate> closest;
  partition::Plan closest_plan = requested.plan;
  auto fitting = [&](const partition::Plan& plan) -> std::optional<std::pair<TransitionPolicy, Estimate>> {
    for (TransitionPolicy policy : policies) {
      Estimate e = estimate(plan, policy);
      if (e.peak <= *memory_limit) return std::pair{policy, std::move(e)};
      if (!closest || e.peak < closest->peak) closest = std::move(e), closest_plan = plan;
    }
    return std::nullopt;
  };
  if (auto fit = fitting(requested.plan)) return {std::move(requested.plan), fit->first, std::move(fit->second.dry)};

  const Extent procs = requested.plan.procs;
  std::vector<std::string> planners{options.planner};
  for (const std::string& name : partition::planners_for(graph))
    if (name != options.planner) planners.push_back(name);
  std::optional<FittedPlan> best;
  double best_objective = 0;
  for (Extent p : {procs, 2 * procs, 4 * procs})
    for (const std::string& planner : planners) {
      if (p == procs && planner == options.planner) continue;  // `requested`, which does not fit
      partition::Plan plan = costing.make(p, planner, options.cost_model);
      if (auto fit = fitting(plan))
        if (!best || better(fit->second.objective, best_objective)) {
          best_objective = fit->second.objective;
          best = FittedPlan{std::move(plan), fit->first, std::move(fit->second.dry)};
        }
    }
  if (best) return *best;
  throw Error("no plan fits the memory limit of " + std::to_string(*memory_limit) + " bytes per rank; the closest (" +
              closest_plan.planner + " at p = " + std::to_string(closest_plan.procs) + ") needs " +
              std::to_string(closest->peak) + " bytes on rank " + std::to_string(closest->rank) + " at vertex '" +
              graph.vertex(closest->vertex).name + "', " + std::to_string(closest->peak - *memory_limit) +
              " bytes more than the limit");
}

}  // namespace

FittedPlan choose_plan(const Graph& graph, int ranks, const Options& options, const partition::Carried& carried) {
  const Extent procs = options.procs ? *options.procs : partition::procs_for_ranks(ranks);
  const PlanCosting costing(graph, ranks, options, carried);
  FittedPlan fitted = fit_memory(graph, ranks, options, costing.requested(procs, options.planner), costing);
  cost_by_dry_run(graph, fitted.plan, fitted.dry_run, options.objective);
  return fitted;
}

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream words(line);
    std::string key;
    std::size_t kib = 0;
    if (words >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

std::optional<DeviceMemory> available_cuda_memory() {
#ifdef KOKKOS_ENABLE_CUDA
  DeviceMemory memory;
  std::size_t total = 0;
  if (cudaGetDevice(&memory.device) != cudaSuccess || cudaMemGetInfo(&memory.free_bytes, &total) != cudaSuccess)
    throw Error("cannot read the free memory of this process's CUDA device");
  return memory;
#else
  return std::nullopt;
#endif
}

void check_node_memory(MPI_Comm comm, std::size_t estimate, bool device) {
  const redistribute::Communicator world(comm);
  // The ranks that draw on one memory: those of a node, and of one device there.
  std::optional<DeviceMemory> gpu;
  if (device) redistribute::collectively(world, [&] { gpu = available_cuda_memory(); });
  if (device && !gpu) return;
  MPI_Comm shared = MPI_COMM_NULL;
  redistribute::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &shared),
                          "MPI_Comm_split_type");
  if (gpu) {  // the node's ranks on this rank's device
    MPI_Comm node = shared;
    const int split = MPI_Comm_split(node, gpu->device, world.rank(), &shared);
    MPI_Comm_free(&node);
    redistribute::check_mpi(split, "MPI_Comm_split");
  }
  unsigned long long mine = estimate, needed = 0;
  const int rc = MPI_Allreduce(&mine, &needed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, shared);
  int ranks = 0;
  MPI_Comm_size(shared, &ranks);
  MPI_Comm_free(&shared);
  redistribute::check_mpi(rc, "MPI_Allreduce");
  redistribute::collectively(world, [&] {
    const std::size_t available = gpu ? gpu->free_bytes : available_host_memory();
    const std::string where = gpu ? " sharing CUDA device " + std::to_string(gpu->device) : "";
    if (available > 0 && needed > available)
      throw Error(
          "the plan needs " + std::to_string(needed) + " bytes on a node of " + std::to_string(ranks) + " rank(s)" +
          where + " (estimated: blocks, kernel temporaries, exchange buffers), and " + std::to_string(available) +
          " are available there: run on more nodes, or set a memory limit per rank to choose a plan that needs less");
  });
}

}  // namespace einrel::engine
