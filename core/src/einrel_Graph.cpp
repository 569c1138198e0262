#include <einrel_Graph.hpp>

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace einrel {

std::vector<bool> sparse_values(const Graph& graph) {
  std::vector<bool> sparse(graph.size(), false);
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) {
      sparse[v] = vertex.sparse;
      continue;
    }
    const auto is_sparse = [&](VertexId in) { return sparse[in]; };
    switch (sparse_rule(vertex.resolved->einsum())) {
      case SparseRule::dense:
        break;
      case SparseRule::intersection:
        sparse[v] = std::any_of(vertex.inputs.begin(), vertex.inputs.end(), is_sparse);
        break;
      case SparseRule::union_of_shapes:
        sparse[v] = std::all_of(vertex.inputs.begin(), vertex.inputs.end(), is_sparse);
        break;
    }
  }
  return sparse;
}

bool is_valid_name(std::string_view name) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return !name.empty() && alpha(name[0]) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return alpha(c) || digit(c); });
}

std::vector<VertexId> first_of_equal_einsums(const Graph& graph) {
  auto hash = [](const ResolvedEinSum& r) {
    const EinSum& e = r.einsum();
    std::size_t h = std::hash<std::string>()(e.output);
    auto mix = [&h](std::size_t x) { h = h * 1000003u ^ x; };
    for (const std::string& in : e.inputs) mix(std::hash<std::string>()(in));
    mix(static_cast<std::size_t>(e.join)), mix(static_cast<std::size_t>(e.agg)),
        mix(static_cast<std::size_t>(e.map.kind));
    for (const Bound& b : r.operand_bounds())
      for (Extent n : b) mix(static_cast<std::size_t>(n));
    return h;
  };
  std::vector<VertexId> first(graph.size());
  std::unordered_map<std::size_t, std::vector<VertexId>> seen;  // by hash, the first vertex of each kind
  for (VertexId v = 0; v < graph.size(); ++v) {
    first[v] = v;
    if (graph.vertex(v).is_input()) continue;
    const ResolvedEinSum& r = graph.resolved(v);
    std::vector<VertexId>& kinds = seen[hash(r)];
    const auto same = std::find_if(kinds.begin(), kinds.end(), [&](VertexId u) {
      const ResolvedEinSum& q = graph.resolved(u);
      return q.einsum() == r.einsum() && q.operand_bounds() == r.operand_bounds();
    });
    if (same != kinds.end())
      first[v] = *same;
    else
      kinds.push_back(v);
  }
  return first;
}

void Graph::check_new_name(const std::string& name) const {
  if (!is_valid_name(name))
    throw Error("invalid tensor name '" + name + "' (names are letters, digits and '_', not starting with a digit)");
  if (auto prev = find(name)) {
    const auto& where = vertices_[*prev].origin;
    throw Error("'" + name + "' is already defined" + (where.line ? " at " + where.str() : std::string()));
  }
}

std::string Graph::fresh_name() const {
  for (std::size_t k = vertices_.size();; ++k)
    if (!find("t" + std::to_string(k))) return "t" + std::to_string(k);
}

VertexId Graph::input(const std::string& name, Dtype dtype, const Bound& bound, SourceLocation origin) {
  check_new_name(name);
  check_bound(bound, "input '" + name + "'");
  vertices_.push_back(
      Vertex{name, dtype, bound, std::nullopt, {}, std::move(origin), std::nullopt, false, std::nullopt, std::nullopt});
  names_.emplace(name, vertices_.size() - 1);
  return vertices_.size() - 1;
}

VertexId Graph::sparse_input(const std::string& name, Dtype dtype, const Bound& bound, SourceLocation origin) {
  const VertexId v = input(name, dtype, bound, std::move(origin));
  vertices_[v].sparse = true;
  return v;
}

void Graph::bind_shape(VertexId v, BlockShape shape) {
  const Vertex& vertex = vertices_.at(v);
  if (!vertex.is_input() || !vertex.sparse)
    throw Error("'" + vertex.name + "' is no sparse input: only inputs declared sparse take a block shape");
  if (shape.grid().bound() != vertex.bound)
    throw Error("the block shape of '" + vertex.name + "' cuts " + to_string(shape.grid().bound()) +
                ", not its bound " + to_string(vertex.bound));
  vertices_[v].shape = std::move(shape);
}

void Graph::slice_vertex(VertexId v, VertexSlice slice) {
  const Vertex& vertex = vertices_.at(v);
  if (vertex.is_input()) throw Error("'" + vertex.name + "' is an input: only einsum vertices are sliced");
  const ResolvedEinSum& resolved = *vertex.resolved;
  if (resolved.einsum().unique_labels().find(slice.label) == std::string::npos)
    throw Error("'" + vertex.name + "' has no label '" + std::string(1, slice.label) + "' to slice");
  const Extent extent = resolved.extent(slice.label);
  if (slice.passes < 1 || slice.pass < 0 || slice.pass >= slice.passes || extent % slice.passes != 0)
    throw Error("pass " + std::to_string(slice.pass) + " of " + std::to_string(slice.passes) +
                " does not slice label '" + std::string(1, slice.label) + "' of extent " + std::to_string(extent) +
                " in '" + vertex.name + "'");
  vertices_[v].slice = slice;
}

VertexId Graph::einsum(std::string_view equation, VertexId x, const EinsumOptions& options) {
  return einsum(equation, std::vector<VertexId>{x}, options);
}

VertexId Graph::einsum(std::string_view equation, VertexId x, VertexId y, const EinsumOptions& options) {
  return einsum(equation, std::vector<VertexId>{x, y}, options);
}

VertexId Graph::einsum(std::string_view equation, const std::vector<VertexId>& operands, const EinsumOptions& options) {
  EinSum e = EinSum::parse(equation, operands.size());
  e.join = options.join;
  e.agg = options.agg;
  e.map = options.map;
  const std::string name = options.name.empty() ? fresh_name() : options.name;
  if (operands.size() <= 2) return add_einsum(name, e, operands, options.origin);
  const std::size_t before = vertices_.size();
  try {
    return add_nary(name, e, operands, options.origin);
  } catch (...) {
    for (VertexId v = before; v < vertices_.size(); ++v) names_.erase(vertices_[v].name);
    vertices_.resize(before);  // all or nothing
    throw;
  }
}

void Graph::validate() const {
  if (outputs_.empty()) throw Error("the graph has no output");
}

ResolvedEinSum Graph::resolve_operands(const EinSum& einsum, const std::vector<VertexId>& operands) const {
  // Errors in the order of the operands, and within one: its rank, its dtype, its labels' extents.
  std::vector<Bound> bounds;
  std::vector<std::string> names;
  std::optional<std::size_t> other_dtype;  // the first operand of the right rank with another dtype
  for (std::size_t k = 0; k < operands.size(); ++k) {
    if (operands[k] >= vertices_.size()) throw OperandError(k, "operand " + std::to_string(k + 1) + " is not a vertex");
    const Vertex& in = vertices_[operands[k]];
    if (!other_dtype && in.bound.size() == einsum.inputs.at(k).size() && in.dtype != vertices_[operands[0]].dtype)
      other_dtype = k;
    bounds.push_back(in.bound);
    names.push_back(in.name);
  }
  auto dtype_error = [&](std::size_t k) {
    const Vertex &in = vertices_[operands[k]], &first = vertices_[operands[0]];
    return OperandError(k, "'" + in.name + "' is " + std::string(dtype_name(in.dtype)) + " but '" + first.name +
                               "' is " + std::string(dtype_name(first.dtype)) +
                               "; operands of one einsum share a dtype");
  };
  std::optional<ResolvedEinSum> resolved;
  try {
    resolved = resolve(einsum, bounds, names);
  } catch (const OperandError& e) {
    if (other_dtype && e.position() >= *other_dtype) throw dtype_error(*other_dtype);
    throw;
  }
  if (other_dtype) throw dtype_error(*other_dtype);
  return std::move(*resolved);
}

const ResolvedEinSum& Graph::resolved(VertexId v) const {
  const Vertex& vertex = vertices_.at(v);
  if (!vertex.resolved) throw Error("'" + vertex.name + "' is an input, not an einsum");
  return *vertex.resolved;
}

VertexId Graph::add_einsum(const std::string& name, const EinSum& einsum, const std::vector<VertexId>& operands,
                           SourceLocation origin) {
  check_new_name(name);
  if (operands.size() != einsum.arity())
    throw Error("einsum '" + einsum.equation() + "' takes " + std::to_string(einsum.arity()) + " operand(s), got " +
                std::to_string(operands.size()));
  if (einsum.arity() < 1 || einsum.arity() > 2)
    throw Error("a graph vertex applies an einsum to one or two operands, not " + std::to_string(einsum.arity()));
  if (einsum.arity() == 1 && einsum.join != JoinOp::mul)
    throw Error("join=" + std::string(op_name(einsum.join)) +
                " needs two operands; a unary einsum has only map= and agg=");

  ResolvedEinSum resolved = resolve_operands(einsum, operands);
  const Bound bound = resolved.output_bound();
  check_bound(bound, "einsum '" + name + "'");
  vertices_.push_back(Vertex{name, vertices_[operands[0]].dtype, bound, einsum, operands, std::move(origin),
                             std::move(resolved), false, std::nullopt, std::nullopt});
  names_.emplace(name, vertices_.size() - 1);
  return vertices_.size() - 1;
}

void Graph::output(VertexId v) {
  if (v >= vertices_.size()) throw Error("output " + std::to_string(v) + " is not a vertex");
  if (std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end())
    throw Error("'" + vertices_[v].name + "' is already an output");
  outputs_.push_back(v);
}

std::optional<VertexId> Graph::find(std::string_view name) const {
  const auto found = names_.find(std::string(name));
  if (found == names_.end()) return std::nullopt;
  return found->second;
}

}  // namespace einrel
