#include <einrel_DryRun.hpp>
#include <einrel_Error.hpp>
#include <einrel_MemoryFit.hpp>

#include <einrel_Communicator.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace einrel::engine {

FittedPlan plan_within_memory(const Graph& graph, int ranks, const Options& options,
                              const partition::Carried& carried) {
  const Extent procs = options.procs ? *options.procs : partition::procs_for_ranks(ranks);
  auto make_plan = [&](Extent p, const std::string& planner) {
    partition::Plan plan = partition::make_plan(graph, p, planner, options.cost_model);
    if (!carried.empty()) partition::plan_carried(graph, plan, carried);
    return plan;
  };
  partition::Plan requested = make_plan(procs, options.planner);
  const std::optional<std::size_t>& memory_limit = options.memory_limit;
  if (!memory_limit) return {requested, options.transitions};

  struct Estimate {
    std::size_t peak = 0;
    int rank = 0;
    VertexId vertex = 0;
  };
  auto estimate = [&](const partition::Plan& plan, TransitionPolicy policy) {
    const Traffic dry = dry_run(graph, Schedule(graph, plan.partitions, ranks, policy, CommModel{}, carried),
                                options.exchange_limits());
    Estimate e;
    for (int r = 0; r < ranks; ++r)
      if (dry.peak_memory_bytes[r] > e.peak) e = {dry.peak_memory_bytes[r], r, dry.peak_vertex[r]};
    return e;
  };
  std::vector<TransitionPolicy> policies{options.transitions};
  if (options.transitions == TransitionPolicy::automatic)
    policies.insert(policies.end(), {TransitionPolicy::point_to_point, TransitionPolicy::collectives});
  // The first policy under which `plan` fits, else nothing; `closest` keeps the smallest miss.
  std::optional<Estimate> closest;
  partition::Plan closest_plan = requested;
  auto fitting = [&](const partition::Plan& plan) -> std::optional<TransitionPolicy> {
    for (TransitionPolicy policy : policies) {
      const Estimate e = estimate(plan, policy);
      if (e.peak <= *memory_limit) return policy;
      if (!closest || e.peak < closest->peak) closest = e, closest_plan = plan;
    }
    return std::nullopt;
  };
  if (const auto policy = fitting(requested)) return {requested, *policy};

  std::vector<std::string> planners{options.planner};
  for (const std::string& name : partition::planners_for(graph))
    if (name != options.planner) planners.push_back(name);
  std::optional<FittedPlan> best;
  for (Extent p : {procs, 2 * procs, 4 * procs})
    for (const std::string& planner : planners) {
      if (p == procs && planner == options.planner) continue;  // `requested`, which does not fit
      partition::Plan plan = make_plan(p, planner);
      if (const auto policy = fitting(plan))
        if (!best || plan.total_cost < best->plan.total_cost) best = FittedPlan{std::move(plan), *policy};
    }
  if (best) return *best;
  throw Error("no plan fits the memory limit of " + std::to_string(*memory_limit) + " bytes per rank; the closest (" +
              closest_plan.planner + " at p = " + std::to_string(closest_plan.procs) + ") needs " +
              std::to_string(closest->peak) + " bytes on rank " + std::to_string(closest->rank) + " at vertex '" +
              graph.vertex(closest->vertex).name + "', " + std::to_string(closest->peak - *memory_limit) +
              " bytes more than the limit");
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

void check_node_memory(MPI_Comm comm, std::size_t estimate) {
  const redistribute::Communicator world(comm);
  MPI_Comm node = MPI_COMM_NULL;
  redistribute::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node),
                          "MPI_Comm_split_type");
  unsigned long long mine = estimate, needed = 0;
  const int rc = MPI_Allreduce(&mine, &needed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, node);
  int ranks = 0;
  MPI_Comm_size(node, &ranks);
  MPI_Comm_free(&node);
  redistribute::check_mpi(rc, "MPI_Allreduce");
  redistribute::collectively(world, [&] {
    const std::size_t available = available_host_memory();
    if (available > 0 && needed > available)
      throw Error(
          "the plan needs " + std::to_string(needed) + " bytes on a node of " + std::to_string(ranks) +
          " rank(s) (estimated: blocks, kernel temporaries, exchange buffers), and " + std::to_string(available) +
          " are available there: run on more nodes, or set a memory limit per rank to choose a plan that needs less");
  });
}

}  // namespace einrel::engine
