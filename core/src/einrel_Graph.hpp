#ifndef EINREL_GRAPH_HPP
#define EINREL_GRAPH_HPP

#include <einrel_BlockShape.hpp>
#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_EinSum.hpp>
#include <einrel_Error.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace einrel {

struct ContractionOrder;  // einrel_ContractionOrder.hpp

using VertexId = std::size_t;

// One pass of a label sliced across part of a graph (einrel_Slicing.hpp): the vertex runs only the join tuples
// whose block along `label` lies in chunk `pass` of the label's extent cut into `passes` equal chunks, and
// its value holds only the blocks those tuples write.
struct VertexSlice {
  char label = 0;
  Extent pass = 0, passes = 1;
  friend bool operator==(const VertexSlice& a, const VertexSlice& b) {
    return a.label == b.label && a.pass == b.pass && a.passes == b.passes;
  }
};

// A vertex of an EinGraph (eindecomp.txt §3): an input tensor, or an EinSum over earlier vertices.
struct Vertex {
  std::string name;
  Dtype dtype = Dtype::f64;
  Bound bound;
  std::optional<EinSum> einsum;  // empty for an input
  std::vector<VertexId> inputs;  // operands of the EinSum, in equation order
  SourceLocation origin;         // where a graph file declared it (empty for the builder API)
  // The EinSum resolved against its operands' bounds (label extents and positions), computed once when
  // the vertex is added; empty for an input.
  std::optional<ResolvedEinSum> resolved;
  // A block-sparse input (`input A f64[..] sparse`, docs/sparse.md): its blocks may be absent, as its shape
  // says. The shape is bound before the graph is planned (Graph::bind_shape); empty for dense inputs.
  bool sparse = false;
  std::optional<BlockShape> shape;
  // Set on the copies of a sliced region (Graph::slice_vertex): the pass of the label this vertex runs.
  std::optional<VertexSlice> slice;

  bool is_input() const { return !einsum.has_value(); }
};

// An einsum of three or more operands as it was written, and the binary vertices it became (docs/graph-format.md):
// the order of fewest flops that contraction_order found, by its `method` (exhaustive, dp or greedy).
struct NaryEinsum {
  std::string equation;
  std::vector<VertexId> steps;  // the binary vertices in order, consecutive; the last holds the result
  std::string method;
  double flops = 0;                 // counted as opt_einsum counts them (einrel_ContractionOrder.hpp)
  double largest_intermediate = 0;  // elements
  EinSum einsum;                    // as written, with its operands
  std::vector<VertexId> operands;
  SourceLocation origin;
};

// How the builder API applies an einsum: its ops and, optionally, the vertex name (generated when
// empty) and where a graph file wrote it.
struct EinsumOptions {
  JoinOp join = JoinOp::mul;
  AggOp agg = AggOp::sum;
  MapOp map{};
  std::string name;
  SourceLocation origin{};
};

// A DAG of EinSum vertices (an EinGraph, eindecomp.txt §5). Vertices are added after their operands, so
// the insertion order is a topological order. Every call validates (names, ranks, label extents, dtypes,
// ops) and throws Error; a failed call leaves the graph unchanged.
class Graph {
 public:
  // Builder API: Graph g; auto A = g.input("A", Dtype::f64, {1000, 100}); auto T = g.einsum("ij,jk->ik", A, B);
  VertexId input(const std::string& name, Dtype dtype, const Bound& bound, SourceLocation origin = {});
  // A block-sparse input (Vertex::sparse), whose shape bind_shape gives before planning.
  VertexId sparse_input(const std::string& name, Dtype dtype, const Bound& bound, SourceLocation origin = {});
  // Binds the shape of sparse input v (replacing an earlier one). Throws Error unless v is a sparse input
  // and the shape's grid cuts its bound.
  void bind_shape(VertexId v, BlockShape shape);
  // Restricts EinSum vertex v to one pass of a sliced label (Vertex::slice). Throws Error unless the label is
  // one of v's, 0 <= pass < passes and the label's extent is a multiple of `passes`.
  void slice_vertex(VertexId v, VertexSlice slice);
  // Any number of operands: three or more are decomposed into binary vertices (see einrel_GraphMacros.cpp);
  // the returned vertex holds the result.
  VertexId einsum(std::string_view equation, const std::vector<VertexId>& operands, const EinsumOptions& options = {});
  VertexId einsum(std::string_view equation, VertexId x, const EinsumOptions& options = {});
  VertexId einsum(std::string_view equation, VertexId x, VertexId y, const EinsumOptions& options = {});
  // Softmax over the last dimension of x (rank >= 1), as four vertices: max, sub+exp, sum, div
  // (eindecomp.txt §3). Helper vertices are named NAME__max, NAME__exp, NAME__sum.
  VertexId softmax(VertexId x, const std::string& name = "", SourceLocation origin = {});
  void output(VertexId v);
  // Throws Error unless the graph has at least one output. (The other properties hold by construction.)
  void validate() const;

  // One vertex with one or two operands; infers the output bound from the operands and throws
  // OperandError when an operand does not fit.
  VertexId add_einsum(const std::string& name, const EinSum& einsum, const std::vector<VertexId>& operands,
                      SourceLocation origin = {});

  std::size_t size() const { return vertices_.size(); }
  const Vertex& vertex(VertexId v) const { return vertices_.at(v); }
  // The resolved EinSum of vertex v; throws Error when v is an input.
  const ResolvedEinSum& resolved(VertexId v) const;
  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<VertexId>& outputs() const { return outputs_; }
  std::optional<VertexId> find(std::string_view name) const;
  // The n-ary einsums of the graph, in the order they were added.
  const std::vector<NaryEinsum>& nary_einsums() const { return nary_; }
  // This graph with n-ary einsum `nary` split in `order` (one of contraction_orders(), the planner's
  // alternatives): the same vertices, names and ids, its steps computing the same result another way.
  Graph with_order(std::size_t nary, const ContractionOrder& order) const;

 private:
  void check_new_name(const std::string& name) const;
  std::string fresh_name() const;
  // `einsum` resolved against the bounds of `operands`, checking that they are vertices, ranks, dtypes
  // and that a label has one extent in all operands; throws OperandError naming the operand.
  ResolvedEinSum resolve_operands(const EinSum& einsum, const std::vector<VertexId>& operands) const;
  VertexId add_nary(const std::string& name, const EinSum& einsum, const std::vector<VertexId>& operands,
                    const SourceLocation& origin);
  // Adds the binary vertices of `order`, the last named `name`, and returns their record.
  NaryEinsum add_steps(const std::string& name, const EinSum& einsum, const std::vector<VertexId>& operands,
                       const SourceLocation& origin, const ContractionOrder& order);

  std::vector<Vertex> vertices_;
  std::vector<VertexId> outputs_;
  std::vector<NaryEinsum> nary_;
  std::unordered_map<std::string, VertexId> names_;  // find()'s index
};

// Per vertex, the first vertex with an equal EinSum on equal operand bounds (itself for the first of its
// kind, and for an input): vertices that plan, cost and schedule alike, which a chain or a stack of layers
// repeats.
std::vector<VertexId> first_of_equal_einsums(const Graph& graph);

// Per vertex, whether it holds a block-sparse value by the rules of its EinSum (sparse_rule; docs/sparse.md "Which
// vertices stay sparse"): a sparse input; an intersection with a sparse operand; a union of sparse operands only.
// A schedule may give a dense value blocks of its own (the passes of a sliced vertex): those are not sparse here.
std::vector<bool> sparse_values(const Graph& graph);

// True for names usable in graph files and as HDF5 dataset names: [A-Za-z_][A-Za-z0-9_]*.
bool is_valid_name(std::string_view name);

}  // namespace einrel

#endif
