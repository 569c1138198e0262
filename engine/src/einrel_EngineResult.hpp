#ifndef EINREL_ENGINERESULT_HPP
#define EINREL_ENGINERESULT_HPP

#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_Graph.hpp>
#include <einrel_Tensor.hpp>
#include <einrel_Traffic.hpp>

#include <functional>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

// What the engine takes besides the schedule (values of either dtype, a reader for inputs read from their
// source) and what it returns (the outputs' values and this rank's measures).

namespace einrel::engine {

template <class MemorySpace>
using AnyDistributed = std::variant<redistribute::DistributedTensorRelation<float, MemorySpace>,
                                    redistribute::DistributedTensorRelation<double, MemorySpace>>;

// Blocks of a tensor with their boxes in it, of either dtype.
template <class Scalar, class MemorySpace>
using BoxedBlocks = std::vector<std::pair<Box, Tensor<Scalar, MemorySpace>>>;
template <class MemorySpace>
using AnyBoxedBlocks = std::variant<BoxedBlocks<float, MemorySpace>, BoxedBlocks<double, MemorySpace>>;

// How the engine calls an InputReader: on every rank in the same order, with no blocks where a rank reads
// none (it may communicate), or on one rank alone between its kernel calls (it must not).
enum class ReadCall { collective, local };

// Fills `blocks` (allocated, of the input's dtype) with the values of graph input `input` in their boxes,
// read from its source (InputReads::again): collectively for an operand read again (Schedule::reads_again),
// locally for the blocks of a streamed input (Schedule::streamed).
template <class MemorySpace>
using InputReader = std::function<void(VertexId input, const AnyBoxedBlocks<MemorySpace>& blocks, ReadCall call)>;

// What one rank measured for one vertex: wall time of the whole vertex, of its kernels and of its streamed
// inputs' reads, and the floats it sent to and received from other ranks (operand exchanges and the
// reduction of partials).
// What one vertex's steps took on one rank, in four parts: read_seconds the reads of inputs from their source
// (streamed blocks between kernel calls, inputs read again), kernel_seconds the block kernels, reduce_seconds
// the ⊕-reduction of partials to their owners, exchange_seconds the rest (the operands' exchange or
// collectives, and the step's bookkeeping). The vertex's time is their sum.
struct VertexTimes {
  double read_seconds = 0;
  double exchange_seconds = 0;
  double kernel_seconds = 0;
  double reduce_seconds = 0;

  double seconds() const { return read_seconds + exchange_seconds + kernel_seconds + reduce_seconds; }
  VertexTimes& operator+=(const VertexTimes& other) {
    read_seconds += other.read_seconds;
    exchange_seconds += other.exchange_seconds;
    kernel_seconds += other.kernel_seconds;
    reduce_seconds += other.reduce_seconds;
    return *this;
  }
};

// What this rank measured for one vertex: its times and the floats it sent and received for it.
struct VertexMeasure : VertexTimes {
  Extent floats_sent = 0;
  Extent floats_received = 0;
};

// The values of the graph's outputs (indexed by vertex; other entries empty), distributed in the
// schedule's layouts, and what this rank measured.
template <class MemorySpace>
struct EngineResult {
  std::vector<std::optional<AnyDistributed<MemorySpace>>> values;
  std::vector<VertexMeasure> vertices;
  RankTraffic traffic;
};

}  // namespace einrel::engine

#endif
