#ifndef EINREL_PLANCOMMAND_HPP
#define EINREL_PLANCOMMAND_HPP

#include <einrel_CostModel.hpp>
#include <einrel_Transition.hpp>

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace einrel {

// Options of `einrel plan` (docs/cli.md).
struct PlanOptions {
  std::string graph;
  std::string format = "text";  // text, json or dot
  std::optional<int> ranks;     // add the engine's dry run for this many ranks
  engine::Options engine;       // procs, planner, cost model, memory limit (on `ranks`, default the MPI ranks),
                                // transitions (for the dry run)
};
// Plans a graph file and prints the plan to `out` on rank 0; with `ranks`, also the engine's dry run on
// that many ranks (per rank floats sent and received, peak block bytes; no data, no MPI). Planning is deterministic, so
// every rank plans and fails alike; throws Error for an unknown format or planner, p out of range, or a bad graph
// file.
void plan_graph(MPI_Comm comm, const PlanOptions& options, std::ostream& out);

}  // namespace einrel

#endif
