#ifndef EINREL_SLICING_HPP
#define EINREL_SLICING_HPP

#include <einrel_Graph.hpp>

#include <optional>
#include <string>
#include <vector>

namespace einrel {

// A graph with one label sliced across a producer and its readers (issue 45; cotengra's slicing, docs/planner.md
// "Slicing"): the value's producer and every vertex that reads a value carrying the label (transitively, up to
// the vertices that aggregate it) form the region; the region is copied once per pass, each copy restricted to
// its chunk of the label (Vertex::slice), and the passes run one after the other, so a rank holds one chunk of
// the region's values at a time. Values that leave the region are combined pass by pass: a value that still
// carries the label by `add` (each pass fills its own chunk; the others are absent, read as zero), a value that
// aggregated it by the aggregation's own operator (sum: add, max, min, prod: mul). Values entering the region
// are read whole by every pass, each pass reading only the blocks its chunk needs.
struct SlicedGraph {
  Graph graph;
  // Per vertex of `graph`: the vertex of the original graph it copies; for a combining vertex, the region
  // vertex whose value it combines.
  std::vector<VertexId> origin;
  std::vector<bool> combining;
  // The name of the value whose dimension is sliced, the dimension, the passes, and the region's vertices.
  std::string value;
  int dimension = 0;
  Extent passes = 1;
  std::size_t region_size = 0;
  bool before = false;  // the region took in producers before the value (slice_graph's `before` did something)

  // "T1 sliced along dimension 1 in 4 passes (5 vertices per pass)", "... (with its producers; 9 vertices per pass)".
  std::string describe() const;
};

// `graph` with dimension `dimension` of the value of EinSum vertex `value` sliced into `passes` (>= 2) chunks,
// or nothing where that cannot be done: the extent is no multiple of `passes`, a region vertex reads the
// sliced value along two labels or reads a value of the region that aggregated the label, or a vertex outside
// the region lies between two of its vertices (it reads a value leaving the region and feeds the region).
// Graph inputs and the vertices before the region come first, in their order; then the passes, each followed
// by the combination of the values leaving the region; then the rest. The graph's outputs keep their names.
// With `before`, the region also takes in the producers of the values it reads along the label (transitively,
// where they are no input and no output and the region still runs in passes): they are then computed a chunk
// at a time too, instead of held whole.
std::optional<SlicedGraph> slice_graph(const Graph& graph, VertexId value, int dimension, Extent passes,
                                       bool before = false);

}  // namespace einrel

#endif
