#ifndef EINREL_PLANCOMMAND_HPP
#define EINREL_PLANCOMMAND_HPP

#include <einrel_CostModel.hpp>
#include <einrel_Options.hpp>
#include <einrel_RunCommand.hpp>
#include <einrel_Transition.hpp>

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace einrel::cli {

// Without --ranks, a plan is costed on R = p ranks up to this many (else on the launch's ranks).
constexpr Extent max_planned_ranks = Extent{1} << 16;

// Options of `einrel plan` (docs/cli.md).
struct PlanOptions {
  std::string graph;
  // The shapes of sparse inputs (docs/sparse.md): from the mask or norms datasets next to the root datasets
  // of `input`, or random with `random_seed` (as `einrel run` makes them).
  std::optional<std::string> input;
  std::optional<std::uint64_t> random_seed;
  SparseOptions sparse;
  std::string format = "text";  // text, json or dot
  std::optional<int> ranks;     // the R the plan is costed on, and its dry run's figures per rank shown
  engine::Options engine;       // procs, planner, cost model, objective, machine, memory limit (on R),
                                // transitions, input reads
};
// Plans a graph file for R ranks and prints the plan to `out` on rank 0, costed by the engine's dry run on
// R ranks (--ranks; else p if --procs is at most max_planned_ranks; else the MPI ranks); with `ranks`, also
// that dry run's figures per rank (floats sent and received, peak block bytes; no data, no MPI). Planning is
// deterministic, so every rank plans and fails alike; throws Error for an unknown format or planner, p out of range, or
// a bad graph file.
void plan_graph(MPI_Comm comm, const PlanOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
