#ifndef EINREL_RUNCOMMAND_HPP
#define EINREL_RUNCOMMAND_HPP

#include <einrel_Graph.hpp>
#include <einrel_Options.hpp>
#include <einrel_RunReport.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace einrel::cli {

// Where `einrel run` and `einrel plan` find the shapes of a graph's sparse inputs when no mask or norms
// dataset gives them (docs/sparse.md): random shapes of block density `random_density` (with --random), or
// the blocks that are all zero in the input (--drop-zero-blocks), both over blocks of edge `tile`.
struct SparseOptions {
  std::optional<double> random_density;  // --random-density
  Extent tile = 256;                     // --sparse-tile
  bool drop_zero_blocks = false;         // --drop-zero-blocks
};

// Options of `einrel run` (docs/cli.md): where the data comes from and goes, what to report, and how to
// plan and run (the pipeline's engine::Options).
struct RunOptions {
  std::string graph;
  std::optional<std::string> input;   // HDF5 file with one root dataset per graph input
  std::vector<std::string> bind;      // "NAME=FILE.h5:/group/dataset" for inputs read from elsewhere
  std::optional<std::string> output;  // HDF5 file to create with one root dataset per graph output
  std::optional<std::string> report;  // JSON run report to create
  std::optional<std::uint64_t> random_seed;
  SparseOptions sparse;
  bool sparse_output = false;  // --sparse-output: each block-sparse output's mask next to it
  bool check = false;          // compare with the single-rank unpartitioned evaluation
  bool progress = false;       // rank 0 prints each finished vertex with the elapsed time
  engine::Options engine;
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
io::RunReport run_built_graph(MPI_Comm comm, Graph graph, const RunOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
