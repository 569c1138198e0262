#ifndef EINREL_MACHINEMODEL_HPP
#define EINREL_MACHINEMODEL_HPP

// The rates by which the engine (transitions, the dry run's seconds) and the planner's objective price a
// schedule, and libeinrel_scalapack prices a call; `einrel calibrate` measures them (einrel::machine reads and
// writes the file).

namespace einrel::engine {

// The machine as the engine models it, per rank (docs/planner.md "The objective"; `einrel calibrate`
// measures it). The α–β (Hockney) part compares the two ways of moving an operand: a message or a stage of
// a collective costs `latency_seconds`, and each byte the busiest rank sends or receives `seconds_per_byte`.
// Bytes alone would always pick point-to-point, which moves exactly the missing pieces; the latency term is
// what favours one collective call over many messages. A kernel call takes the longer of its flops at
// `flops_per_second` and the bytes of its operand and output blocks at `memory_bytes_per_second` (a
// roofline), plus `call_seconds`, and re-reading an input from its source `file_seconds_per_byte` per byte.
struct MachineModel {
  double latency_seconds = 2e-6;
  double seconds_per_byte = 1e-10;         // 10 GB/s
  double file_seconds_per_byte = 2.5e-10;  // 4 GB/s
  double flops_per_second = 4e10;          // a core's dgemm on large blocks
  double memory_bytes_per_second = 1e10;   // a core's streaming rate
  // A contraction call whose smallest GEMM dimension (rows, columns or inner extent) is d runs at
  // flops_per_second · d / (d + this): its packing and edge work, amortized over larger blocks.
  double gemm_half_rate_dimension = 64;
  // What every kernel call costs besides its flops and bytes (resolving it, choosing and launching its
  // kernel): what makes thousands of small calls, such as a block-sparse vertex's, slower than their flops.
  double call_seconds = 5e-6;
};

inline bool operator==(const MachineModel& a, const MachineModel& b) {
  return a.latency_seconds == b.latency_seconds && a.seconds_per_byte == b.seconds_per_byte &&
         a.file_seconds_per_byte == b.file_seconds_per_byte && a.flops_per_second == b.flops_per_second &&
         a.memory_bytes_per_second == b.memory_bytes_per_second &&
         a.gemm_half_rate_dimension == b.gemm_half_rate_dimension && a.call_seconds == b.call_seconds;
}

}  // namespace einrel::engine

#endif
