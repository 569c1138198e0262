#ifndef EINREL_EXECUTIONREPORT_HPP
#define EINREL_EXECUTIONREPORT_HPP

#include <einrel_Communicator.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_Graph.hpp>
#include <einrel_Traffic.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <variant>
#include <vector>

namespace einrel::engine {

// One vertex of one execution over every rank: the slowest rank's times (VertexMeasure) and the floats all
// ranks sent for it.
// One vertex in an execution report: its times on the report's timed rank and the floats moved for it by every
// rank.
struct VertexFigures : VertexTimes {
  Extent floats_moved = 0;
};

// A graph output holding non-finite values after an execution: its NaN and ±Inf element counts.
struct NonFiniteOutput {
  VertexId vertex = 0;
  long long nan = 0, inf = 0;
};

// What one execution measured on every rank, the same on every rank.
struct ExecutionReport {
  std::vector<RankTraffic> ranks;  // per rank: floats sent, received and read, peak block bytes, tuples, flops
  // Per rank, the most bytes its allocator held: pooled blocks, cached ones included, and the exchange's
  // buffers (RankTraffic::peak_block_bytes counts the engine's live blocks only).
  std::vector<std::size_t> peak_allocated_bytes;
  // Per vertex (zero for inputs), the times those of `timed_rank`: the rank whose vertices took longest in
  // all, so that the vertices' times add up to the evaluation's (evaluation_seconds).
  std::vector<VertexFigures> vertices;
  int timed_rank = 0;
  std::vector<NonFiniteOutput> nonfinite_outputs;  // in the graph's output order
  int computing_ranks = 0;                         // ranks that ran at least one join tuple

  Extent floats_moved() const;        // Σ over ranks of floats sent
  double evaluation_seconds() const;  // Σ over vertices of seconds: the timed rank's evaluation
};

// Local: this rank's NaN and ±Inf counts of every graph output in `values`, two numbers per vertex (zero for
// others), each block counted by its first site only (an output that is an input may be held on several
// ranks).
template <class ExecutionSpace>
std::vector<long long> nonfinite_counts(
    const ExecutionSpace& exec, const Graph& graph,
    const std::vector<std::optional<AnyDistributed<typename ExecutionSpace::memory_space>>>& values, int rank);

// Collective over comm: the report of one execution from every rank's EngineResult figures (`vertices`,
// `traffic`), allocator peak (`allocated`) and nonfinite_counts (`nonfinite`).
ExecutionReport gather_execution_report(const comm::Communicator& comm, const Graph& graph,
                                        const std::vector<VertexMeasure>& vertices, const RankTraffic& traffic,
                                        std::size_t allocated, const std::vector<long long>& nonfinite);

namespace detail {

// Counts the NaN (nan_only) or the non-finite elements of a view: x != x is NaN, x - x != 0 non-finite.
template <class View>
struct NonFiniteCount {
  View x;
  bool nan_only;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, long long& n) const {
    const auto v = x(i);
    if (nan_only ? v != v : !(v - v == 0)) ++n;
  }
};

}  // namespace detail

template <class ExecutionSpace>
std::vector<long long> nonfinite_counts(
    const ExecutionSpace& exec, const Graph& graph,
    const std::vector<std::optional<AnyDistributed<typename ExecutionSpace::memory_space>>>& values, int rank) {
  std::vector<long long> counts(2 * graph.size(), 0);
  for (VertexId v : graph.outputs())
    std::visit(
        [&](const auto& d) {
          for (Extent b : d.layout().blocks_of(rank)) {
            if (d.layout().placement().site(b, 0) != rank) continue;
            const auto& view = d.block(d.grid().key(b)).view();
            using View = std::decay_t<decltype(view)>;
            const Kokkos::RangePolicy<ExecutionSpace> all(exec, 0, view.extent(0));
            long long nan = 0, nonfinite = 0;
            Kokkos::parallel_reduce("einrel::engine/nan", all, detail::NonFiniteCount<View>{view, true}, nan);
            Kokkos::parallel_reduce("einrel::engine/nonfinite", all, detail::NonFiniteCount<View>{view, false},
                                    nonfinite);
            counts[2 * v] += nan;
            counts[2 * v + 1] += nonfinite - nan;
          }
        },
        *values[v]);
  return counts;
}

}  // namespace einrel::engine

#endif
