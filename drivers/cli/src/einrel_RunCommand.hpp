#ifndef EINREL_RUNCOMMAND_HPP
#define EINREL_RUNCOMMAND_HPP

#include <einrel_CostModel.hpp>
#include <einrel_Graph.hpp>
#include <einrel_RunReport.hpp>
#include <einrel_Transition.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace einrel {

// Options of `einrel run` (DESIGN.md §4.2).
struct RunOptions {
  std::string graph;
  std::optional<std::string> input;   // HDF5 file with one root dataset per graph input
  std::vector<std::string> bind;      // "NAME=FILE.h5:/group/dataset" for inputs read from elsewhere
  std::optional<std::string> output;  // HDF5 file to create with one root dataset per graph output
  std::optional<std::string> report;  // JSON run report to create
  std::optional<std::uint64_t> random_seed;
  std::optional<std::int64_t> procs;  // p, a power of two; default: the number of ranks rounded up to one
  std::string planner = "eindecomp";  // partition::planner_names()
  partition::CostModel cost_model = partition::CostModel::engine;
  std::optional<std::size_t> memory_limit;  // bytes per rank the plan must fit (engine::plan_within_memory)
  engine::TransitionPolicy transitions = engine::TransitionPolicy::automatic;  // --transitions
  bool check = false;                 // compare with the single-rank unpartitioned evaluation
  bool progress = false;              // rank 0 prints each finished vertex with the elapsed time
  std::size_t comm_buffer_limit = 0;  // bytes of send + receive buffers per exchange round (0: no cap)
};

// Runs a graph file on every rank of `comm` (collective): plans it for p processors, reads each rank's
// blocks of the inputs (parallel HDF5 hyperslabs, or counter-based random values), executes it with the
// engine, writes the outputs collectively and prints the summary on rank 0 (`out`). On any failure on
// any rank, throws Error with the same message on every rank and leaves no output or report file. The
// test-only variable EINREL_TEST_INJECT_FAILURE=RANK:VERTEX:PHASE injects a failure (docs/engine.md).
void run_graph(MPI_Comm comm, const RunOptions& options, std::ostream& out);

// The same on a graph built in memory (options.graph only names it in the summary and report; inputs come
// from options as for a graph file). Returns the run report: complete on rank 0; on other ranks its
// total_seconds, input_seconds and check figures are the same as rank 0's.
RunReport run_built_graph(MPI_Comm comm, Graph graph, const RunOptions& options, std::ostream& out);

}  // namespace einrel

#endif
