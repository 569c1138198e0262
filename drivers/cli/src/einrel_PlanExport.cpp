#include <einrel_PlanExport.hpp>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace einrel::partition {
namespace {

// Whole numbers of up to 13 digits in full, others with six significant digits: what a reader compares.
std::string short_number(double x) {
  std::ostringstream s;
  if (x == std::floor(x) && std::abs(x) < 1e13) {
    s << std::fixed << std::setprecision(0) << x;
  } else {
    s << std::setprecision(6) << x;
  }
  return s.str();
}

// Every digit a double has, so that a script can compare costs exactly.
std::string full_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// "[2,1]": parts per dimension.
std::string parts_list(const std::vector<Extent>& parts) {
  std::string s = "[";
  for (std::size_t k = 0; k < parts.size(); ++k) s += (k ? "," : "") + std::to_string(parts[k]);
  return s + "]";
}

std::string headline(const Plan& plan) {
  return plan.planner + " plan for p = " + std::to_string(plan.procs) + ": predicted cost " +
         short_number(plan.total_cost) + " floats (" + cost_model_name(plan.cost_model) + " cost model)";
}

}  // namespace

std::string plan_text(const Graph& graph, const Plan& plan) {
  std::ostringstream out;
  out << headline(plan) << " (" << plan.partitions_considered << " partitions considered)\n";
  out << "  " << std::left << std::setw(16) << "vertex" << std::setw(20) << "equation" << std::setw(18) << "shape"
      << std::setw(24) << "partition" << std::right << std::setw(14) << "join" << std::setw(14) << "agg"
      << std::setw(14) << "repartition"
      << "\n";
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const VertexCost& c = plan.costs[v];
    out << "  " << std::left << std::setw(16) << vertex.name << std::setw(20) << vertex.einsum->equation()
        << std::setw(18) << to_string(vertex.bound) << std::setw(24) << plan.partitions[v].str() << std::right
        << std::setw(14) << short_number(c.join) << std::setw(14) << short_number(c.agg) << std::setw(14)
        << short_number(c.repartition) << "\n";
  }
  out << "  total: " << short_number(plan.total_cost) << " floats\n";
  return out.str();
}

// Vertex names are identifiers and equations letters, ',' and "->" (the graph validates both), so no string
// here needs JSON escaping.
std::string plan_json(const Graph& graph, const Plan& plan, const std::vector<std::string>& extra) {
  std::ostringstream j;
  j << "{\n  \"schema_version\": " << json_schema_version << ",\n  \"procs\": " << plan.procs << ",\n  \"planner\": \""
    << plan.planner << "\",\n  \"cost_model\": \"" << cost_model_name(plan.cost_model)
    << "\",\n  \"total_cost\": " << full_number(plan.total_cost)
    << ",\n  \"partitions_considered\": " << plan.partitions_considered << ",\n  \"nodes\": [";
  bool first = true;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const PartitionVector& d = plan.partitions[v];
    const VertexCost& c = plan.costs[v];
    j << (first ? "" : ",") << "\n    {\"name\": \"" << vertex.name << "\", \"equation\": \""
      << vertex.einsum->equation() << "\", \"inputs\": [";
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
      j << (k ? ", " : "") << "\"" << graph.vertex(vertex.inputs[k]).name << "\"";
    j << "], \"shape\": " << to_string(vertex.bound) << ", \"partition\": {";
    for (std::size_t k = 0; k < d.labels().size(); ++k)
      j << (k ? ", " : "") << "\"" << d.labels()[k] << "\": " << d.parts()[k];
    j << "}, \"cost\": {\"join\": " << full_number(c.join) << ", \"agg\": " << full_number(c.agg)
      << ", \"repartition\": " << full_number(c.repartition) << "}}";
    first = false;
  }
  j << (first ? "]" : "\n  ]");
  for (const std::string& member : extra) j << ",\n  " << member;
  j << "\n}\n";
  return j.str();
}

std::string plan_dot(const Graph& graph, const Plan& plan) {
  std::ostringstream g;
  g << "digraph plan {\n  graph [label=\"" << headline(plan)
    << "\", labelloc=t, fontname=\"Helvetica\"];\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  std::vector<bool> is_output(graph.size(), false);
  for (VertexId v : graph.outputs()) is_output[v] = true;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    g << "  v" << v << " [label=\"" << vertex.name;
    if (vertex.is_input()) {
      g << "\\n" << dtype_name(vertex.dtype) << to_string(vertex.bound) << "\", shape=ellipse, style=dashed";
    } else {
      const VertexCost& c = plan.costs[v];
      g << " = " << vertex.einsum->equation() << "\\n"
        << to_string(vertex.bound) << "  " << plan.partitions[v].str() << "\\njoin " << short_number(c.join) << "  agg "
        << short_number(c.agg) << "\\nrepartition in " << short_number(c.repartition) << "\"";
    }
    g << (is_output[v] ? ", peripheries=2" : "") << "];\n";
  }
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      const VertexId u = vertex.inputs[k];
      const Vertex& producer = graph.vertex(u);
      const std::vector<Extent> wanted = plan.partitions[v].project(vertex.einsum->inputs[k]);
      g << "  v" << u << " -> v" << v << " [label=\"";
      if (producer.is_input()) {
        g << parts_list(wanted) << "\", style=dashed];\n";
        continue;
      }
      const std::vector<Extent> produced = plan.partitions[u].project(producer.einsum->output);
      if (produced == wanted) {
        g << parts_list(wanted) << "\"];\n";
        continue;
      }
      g << parts_list(produced) << " -> " << parts_list(wanted) << "\\nrepartition "
        << short_number(edge_cost(graph, plan.partitions, v, k, plan.cost_model)) << "\", color=red, penwidth=2];\n";
    }
  }
  g << "}\n";
  return g.str();
}

}  // namespace einrel::partition
