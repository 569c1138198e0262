#ifndef EINREL_MACHINEMODEL_HPP
#define EINREL_MACHINEMODEL_HPP

// The rates by which the engine (transitions, the dry run's seconds) and the planner's objective price a
// schedule, and libeinrel_scalapack prices a call; `einrel calibrate` measures them (einrel::machine reads and
// writes the file).

#include <algorithm>

namespace einrel::engine {

// The machine as the engine models it, per rank (docs/planner.md "The objective"; `einrel calibrate`
// measures it). The α–β (Hockney) part compares the two ways of moving an operand: a message or a stage of
// a collective costs `latency_seconds`, and each byte the busiest rank sends or receives `seconds_per_byte`.
// Bytes alone would always pick point-to-point, which moves exactly the missing pieces; the latency term is
// what favours one collective call over many messages. A kernel call takes the longer of its flops at
// `flops_per_second` and the bytes of its operand and output blocks at `memory_bytes_per_second` (a
// roofline), plus `call_seconds`, and re-reading an input from its source `file_seconds_per_byte` per byte.
// Two levels (docs/planner.md "Nodes"): a message between two ranks of one node (ranks r and s with
// r / ranks_per_node == s / ranks_per_node, ranks numbered node by node as mpiexec places them by default)
// costs `node_latency_seconds` and `node_seconds_per_byte` instead of the network's rates.
struct MachineModel {
  double latency_seconds = 2e-6;
  double seconds_per_byte = 1e-10;  // 10 GB/s
  // Within a node; a machine file without them has one level (these equal the network's).
  double node_latency_seconds = 2e-6;
  double node_seconds_per_byte = 1e-10;
  // Ranks per node; 0: not known, every message at the network's rates (a run finds it with
  // MPI_COMM_TYPE_SHARED where the machine has two levels, engine::Session).
  int ranks_per_node = 0;
  double file_seconds_per_byte = 2.5e-10;  // 4 GB/s
  double flops_per_second = 4e10;          // a core's dgemm on large blocks
  double memory_bytes_per_second = 1e10;   // a core's streaming rate
  // A contraction call whose smallest GEMM dimension (rows, columns or inner extent) is d runs at
  // flops_per_second · d / (d + this): its packing and edge work, amortized over larger blocks.
  double gemm_half_rate_dimension = 64;
  // What every kernel call costs besides its flops and bytes (resolving it, choosing and launching its
  // kernel): what makes thousands of small calls, such as a block-sparse vertex's, slower than their flops.
  double call_seconds = 5e-6;

  // Whether where a message's ends live changes its price: nodes of several ranks and rates that differ.
  bool two_rates() const {
    return node_latency_seconds != latency_seconds || node_seconds_per_byte != seconds_per_byte;
  }
  bool two_level() const { return ranks_per_node > 1 && two_rates(); }
  bool same_node(int r, int s) const { return ranks_per_node > 0 && r / ranks_per_node == s / ranks_per_node; }
  // The time of `messages` messages and of `bytes` bytes one rank sends or receives, `off_node` of each
  // to or from other nodes.
  double message_seconds(double messages, double off_node) const {
    return node_latency_seconds * (messages - off_node) + latency_seconds * off_node;
  }
  double byte_seconds(double bytes, double off_node) const {
    return node_seconds_per_byte * (bytes - off_node) + seconds_per_byte * off_node;
  }
  // One agreement on failure among `ranks` ranks (comm::agree_on_failure: an MPI_Iallreduce of one int), as
  // recursive doubling runs it: ceil(log2 ranks) rounds of one message each, the first ceil(log2 ranks_per_node)
  // within a node where the machine has two levels (its ranks numbered node by node).
  double agreement_seconds(int ranks) const {
    auto rounds = [](int n) {
      int r = 0;
      while ((1LL << r) < n) ++r;
      return r;
    };
    const int all = rounds(ranks), within = two_level() ? std::min(all, rounds(ranks_per_node)) : 0;
    return node_latency_seconds * within + latency_seconds * (all - within);
  }
};

inline bool operator==(const MachineModel& a, const MachineModel& b) {
  return a.latency_seconds == b.latency_seconds && a.seconds_per_byte == b.seconds_per_byte &&
         a.file_seconds_per_byte == b.file_seconds_per_byte && a.flops_per_second == b.flops_per_second &&
         a.memory_bytes_per_second == b.memory_bytes_per_second &&
         a.gemm_half_rate_dimension == b.gemm_half_rate_dimension && a.call_seconds == b.call_seconds &&
         a.node_latency_seconds == b.node_latency_seconds && a.node_seconds_per_byte == b.node_seconds_per_byte &&
         a.ranks_per_node == b.ranks_per_node;
}

}  // namespace einrel::engine

#endif
