#ifndef EINREL_CALIBRATECOMMAND_HPP
#define EINREL_CALIBRATECOMMAND_HPP

#include <mpi.h>

#include <optional>
#include <ostream>
#include <string>

namespace einrel::cli {

// Options of `einrel calibrate` (docs/cli.md).
struct CalibrateOptions {
  std::optional<std::string> output;  // the machine file; printed on rank 0 when absent
  int reps = 5;                       // each measurement's repetitions (the median is kept)
  int ranks_per_node = 0;             // --ranks-per-node: the nodes to measure within and between; 0: MPI's
};

// Collective: measures the rates of engine::MachineModel on the ranks started, each the slowest rank's
// median: MPI latency and bandwidth by a ping-pong between rank pairs at once, within each node (its ranks
// 0-1, 2-3, ...: the node's rates) and between nodes (rank k of node 2m with rank k of node 2m+1: the
// network's), one level where the ranks are all on one node or one to a node, or where MPI's nodes are not
// numbered node by node (pairs 0-1, 2-3, ...); with one rank the defaults stay and the output says so; einrel's kernel
// on a 768-cube f64 matrix product (flops) and on an element-wise sum of 2^22 doubles (memory), and a parallel HDF5
// read of 32 MiB per rank of a file written next to the output. Writes them as a machine file (--machine) and prints a
// summary on rank 0.
void calibrate(MPI_Comm comm, const CalibrateOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
