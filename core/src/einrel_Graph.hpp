#ifndef EINREL_GRAPH_HPP
#define EINREL_GRAPH_HPP

#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_EinSum.hpp>
#include <einrel_Error.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace einrel {

using VertexId = std::size_t;

// A vertex of an EinGraph (eindecomp.txt §3): an input tensor, or an EinSum over earlier vertices.
struct Vertex {
  std::string name;
  Dtype dtype = Dtype::f64;
  Bound bound;
  std::optional<EinSum> einsum;  // empty for an input
  std::vector<VertexId> inputs;  // operands of the EinSum, in equation order
  SourceLocation origin;         // where a graph file declared it (empty for the builder API)

  bool is_input() const { return !einsum.has_value(); }
};

// An EinSum operand that does not fit its equation; position() is the operand's 0-based index.
class OperandError : public PositionedError {
 public:
  using PositionedError::PositionedError;
};

// A DAG of EinSum vertices. Vertices are added after their operands, so the insertion order is a
// topological order. Every add_* call validates (names, ranks, label extents, dtypes) and throws Error.
class Graph {
 public:
  VertexId add_input(const std::string& name, Dtype dtype, const Bound& bound, SourceLocation origin = {});
  // Infers the output bound from the operands; throws OperandError when an operand does not fit.
  VertexId add_einsum(const std::string& name, const EinSum& einsum, const std::vector<VertexId>& operands,
                      SourceLocation origin = {});
  VertexId add_einsum(const std::string& name, std::string_view equation, const std::vector<VertexId>& operands,
                      SourceLocation origin = {});
  void mark_output(VertexId v);

  std::size_t size() const { return vertices_.size(); }
  const Vertex& vertex(VertexId v) const { return vertices_.at(v); }
  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<VertexId>& outputs() const { return outputs_; }
  std::optional<VertexId> find(std::string_view name) const;

 private:
  void check_new_name(const std::string& name) const;

  std::vector<Vertex> vertices_;
  std::vector<VertexId> outputs_;
};

// True for names usable in graph files and as HDF5 dataset names: [A-Za-z_][A-Za-z0-9_]*.
bool is_valid_name(std::string_view name);

}  // namespace einrel

#endif
