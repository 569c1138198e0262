#ifndef EINREL_VERTEXMEMORY_HPP
#define EINREL_VERTEXMEMORY_HPP

#include <einrel_Graph.hpp>

#include <functional>
#include <vector>

// The memory model of the planner's memory-constrained search (docs/planner.md "Memory-constrained search"): what
// the busiest rank holds while a vertex runs, as a function of that vertex's partition alone, so that a plan's
// peak is the largest of its vertices' and a dynamic program can prune by it vertex by vertex. It is a model to
// search with: the engine's dry run then estimates the plan's peak exactly (engine::choose_plan).
namespace einrel::partition {

// A memory limit the search honours: bytes per rank on `ranks` ranks. `call_bytes`, where given, is what one kernel
// call of vertex v with partition `parts` takes beside its blocks (the kernels' temporaries, which the engine
// knows and the planner does not).
// `streamed`, where given, flags the graph inputs the engine streams: read block by block as its reader's calls
// need them and dropped after, never held whole (the engine's Schedule::streamed).
struct MemoryBudget {
  double bytes_per_rank = 0;
  Extent ranks = 1;
  std::function<double(VertexId v, const std::vector<Extent>& parts)> call_bytes;
  std::vector<bool> streamed;
};

// The bytes the busiest rank holds of EinSum vertex v's own operands and result with partition `parts` (over
// v's unique labels): of the J = Π parts tuples it runs ceil(J / ranks), and of each operand (and of the result,
// its partial blocks) at most one block per tuple and at most every block, of a streamed input one block; plus
// budget.call_bytes.
double vertex_bytes(const Graph& graph, VertexId v, const std::vector<Extent>& parts, const MemoryBudget& budget);

// Per vertex v, the bytes every rank holds on average of the other values alive while v runs (the engine runs
// vertices in insertion order): those made before v, graph inputs included, that a later vertex reads or the graph
// outputs, less v's own operands and the streamed inputs; an even share of each, the least the busiest rank can hold.
std::vector<double> resident_bytes(const Graph& graph, const MemoryBudget& budget);

}  // namespace einrel::partition

#endif
