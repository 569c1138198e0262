#ifndef EINREL_RUNCOMMAND_HPP
#define EINREL_RUNCOMMAND_HPP

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace einrel {

// Options of `einrel run` (DESIGN.md §4.2).
struct RunOptions {
  std::string graph;
  std::optional<std::string> input;   // HDF5 file with one root dataset per graph input
  std::optional<std::string> output;  // HDF5 file to create with one root dataset per graph output
  std::optional<std::string> report;  // JSON run report to create
  std::optional<std::uint64_t> random_seed;
  std::optional<std::int64_t> procs;  // p, a power of two; default: the ranks rounded up to a power of two
  std::string planner = "eindecomp";  // partition::planner_names()
  bool check = false;                 // compare with the unpartitioned evaluation
};

// Runs a graph file. Rank 0 of `comm` reads, plans with the named planner, evaluates as tensor relations
// partitioned for p processors (single-rank evaluation of the TRA rewrite) and writes; the other ranks wait for it.
// Prints the summary to `out` on rank 0. On any failure throws Error with the same message on every rank, after making
// sure no output or report file was written.
void run_graph(MPI_Comm comm, const RunOptions& options, std::ostream& out);

}  // namespace einrel

#endif
