#ifndef EINREL_TRAFFIC_HPP
#define EINREL_TRAFFIC_HPP

#include <einrel_Bound.hpp>
#include <einrel_Graph.hpp>

#include <cstddef>
#include <vector>

namespace einrel::engine {

// What the engine does on one rank over a whole graph (docs/cli.md `ranks`): floats (elements)
// sent to and received from other ranks, the high-water mark of the bytes of the blocks it holds
// (inputs, operand copies, partial results, reduction receives, outputs; not communication buffers),
// the join tuples (kernel calls) it ran, and the input floats it read again.
struct RankTraffic {
  Extent floats_sent = 0;
  Extent floats_received = 0;
  std::size_t peak_block_bytes = 0;
  Extent tuples = 0;
  Extent floats_read = 0;  // of graph inputs read again from their source during the run (InputReads::again)
  double flops = 0;        // of the kernel calls it ran (call_flops): what a block-sparse run skips shows here
};

// The flops of one kernel call on blocks resolved as `r` with `operands` operands: 2 per join result of a
// binary call that aggregates (a multiply and an add), one otherwise.
inline double call_flops(const ResolvedEinSum& r, std::size_t operands) {
  double joins = 1;
  for (Extent n : r.extents(r.unique_labels())) joins *= static_cast<double>(n);
  return (operands > 1 && !r.aggregated_labels().empty() ? 2 : 1) * joins;
}

// The figures of every rank and, per vertex, the floats moved between ranks (the sum over ranks of
// what they sent for it; zero for inputs).
struct Traffic {
  std::vector<RankTraffic> ranks;
  std::vector<Extent> floats_moved;
  std::vector<Extent> partials_moved;  // per vertex, the part of floats_moved that is partial results
  // Dry run only, per vertex: the most elements one rank touches for it, each block once: the operand blocks
  // it holds or streams and the output blocks it makes (docs/planner.md "Lower-bound certificate").
  std::vector<Extent> busiest_accessed;
  // Dry run only, per rank: the estimate of the memory the run will allocate at its peak, what the run
  // report's peak_allocated_bytes measures — the peak of pooled blocks and the kernel temporaries of the
  // call running (kernels::einsum_scratch), each block rounded to its pool size class, plus the exchange
  // buffers grown to the largest exchange — and the vertex during which the pooled peak is reached (an
  // input: while inputs are placed).
  std::vector<std::size_t> peak_memory_bytes;
  std::vector<VertexId> peak_vertex;
  // Dry run only, per vertex: the model's time (Schedule::model()), its slowest rank's kernel calls plus its
  // communication (Schedule::communication_seconds); zero for inputs. Their sum is the estimated makespan:
  // the engine runs the vertices one after the other, each as slow as its slowest rank.
  std::vector<double> vertex_seconds;
  // Dry run only: the agreements on failure an execution makes (failure_agreements: one per EinSum
  // vertex, one per step of a collective sequence) and their time at the model's latencies
  // (MachineModel::agreement_seconds), which estimated_seconds leaves out (docs/planner.md "The objective").
  Extent failure_agreements = 0;
  double agreement_seconds = 0;
  double estimated_seconds() const {
    double sum = 0;
    for (double s : vertex_seconds) sum += s;
    return sum;
  }
  Extent total_floats_moved() const {
    Extent sum = 0;
    for (Extent n : floats_moved) sum += n;
    return sum;
  }
};

}  // namespace einrel::engine

#endif
