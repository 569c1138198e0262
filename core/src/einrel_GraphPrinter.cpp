#include <einrel_GraphFile.hpp>

#include <sstream>

namespace einrel {

std::string print_graph(const Graph& graph) {
  std::ostringstream out;
  for (const Vertex& v : graph.vertices()) {
    if (v.is_input()) {
      out << "input " << v.name << " " << dtype_name(v.dtype) << to_string(v.bound) << (v.sparse ? " sparse" : "")
          << "\n";
      continue;
    }
    const EinSum& e = *v.einsum;
    out << v.name << " = einsum(\"" << e.equation() << "\"";
    for (VertexId in : v.inputs) out << ", " << graph.vertex(in).name;
    if (e.join != JoinOp::mul) out << ", join=" << op_name(e.join);
    if (e.agg != AggOp::sum) out << ", agg=" << op_name(e.agg);
    if (e.map.kind != MapKind::identity) out << ", map=" << map_spelling(e.map);
    out << ")\n";
  }
  if (!graph.outputs().empty()) {
    out << "output ";
    for (std::size_t k = 0; k < graph.outputs().size(); ++k)
      out << (k ? ", " : "") << graph.vertex(graph.outputs()[k]).name;
    out << "\n";
  }
  return out.str();
}

}  // namespace einrel
