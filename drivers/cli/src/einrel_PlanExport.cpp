#include <einrel_LowerBound.hpp>
#include <einrel_PlanExport.hpp>
#include <einrel_RunReport.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace einrel::cli {

using engine::FittedPlan;
using partition::PartitionVector;
using partition::Plan;
using partition::VertexCost;

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

// "[2,1]": parts per dimension.
std::string parts_list(const std::vector<Extent>& parts) {
  std::string s = "[";
  for (std::size_t k = 0; k < parts.size(); ++k) s += (k ? "," : "") + std::to_string(parts[k]);
  return s + "]";
}

}  // namespace

std::string procs_text(Extent procs, const std::string& reason) {
  return "p = " + std::to_string(procs) + (reason.empty() ? "" : " (" + reason + ")");
}

namespace {

std::string headline(const FittedPlan& fitted) {
  const Plan& plan = fitted.plan;
  return plan.planner + (fitted.proposed_by != plan.planner ? " (proposed by " + fitted.proposed_by + ")" : "") +
         " plan for " + procs_text(plan.procs, fitted.procs_reason) + ": predicted cost " +
         short_number(plan.total_cost) + " floats (" + partition::cost_model_name(plan.cost_model) +
         " cost model), estimated " + short_number(fitted.estimated_seconds()) + " s";
}

// "order by exhaustive search: V__1, V__2, V (2.04e+09 flops, largest intermediate 5.3e+06)": how an n-ary
// einsum was split (Graph::nary_einsums).
std::string order_text(const Graph& graph, const NaryEinsum& n) {
  std::string steps;
  for (VertexId v : n.steps) steps += (steps.empty() ? "" : ", ") + graph.vertex(v).name;
  const std::string method =
      n.method == "dp"      ? std::string("dynamic programming")
      : n.method == "combo" ? std::string("the least flops + 64 x elements written, chosen with the partitions")
      : n.method == "size"  ? std::string("the fewest elements written, chosen with the partitions")
                            : n.method + " search";
  return "order by " + method + ": " + steps + " (" + short_number(n.flops) + " flops, largest intermediate " +
         short_number(n.largest_intermediate) + ")";
}

// One contraction vertex of the lower-bound certificate (docs/planner.md "Lower-bound certificate").
struct CertificateRow {
  VertexId vertex;
  double words, bound;  // beyond an even share on the busiest rank; the least any plan must receive
};

// Every binary vertex whose labels group as a product, on the ranks the plan was costed on; none for a graph
// with sparse inputs (the bound counts every term, a sparse product skips some).
std::vector<CertificateRow> certificate(const Graph& graph, const FittedPlan& fitted) {
  std::vector<CertificateRow> rows;
  const auto& vertices = graph.vertices();
  if (std::any_of(vertices.begin(), vertices.end(), [](const Vertex& v) { return v.sparse; })) return rows;
  const auto ranks = static_cast<double>(fitted.dry_run.ranks.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input() || graph.vertex(v).slice) continue;  // a pass does a share of the product
    const auto shape = partition::product_shape(graph.resolved(v));
    if (!shape) continue;
    const auto accessed = static_cast<double>(fitted.dry_run.busiest_accessed[v]);
    rows.push_back(
        {v, partition::words_beyond_share(*shape, accessed, ranks), partition::receive_lower_bound(*shape, ranks)});
  }
  return rows;
}

// words / bound, or "-" where the bound is 0.
std::string ratio_text(double words, double bound) {
  if (bound <= 0) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << words / bound;
  return s.str();
}

}  // namespace

std::string plan_text(const Graph& graph, const FittedPlan& fitted) {
  const Plan& plan = fitted.plan;
  std::ostringstream out;
  out << headline(fitted) << " (" << plan.partitions_considered << " partitions considered)\n";
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
  for (const NaryEinsum& n : graph.nary_einsums())
    out << "  " << graph.vertex(n.steps.back()).name << " = einsum(\"" << n.equation << "\"): " << order_text(graph, n)
        << "\n";
  const std::vector<CertificateRow> rows = certificate(graph, fitted);
  if (rows.empty()) return out.str();
  out << "  certificate on " << fitted.dry_run.ranks.size()
      << " ranks: elements the busiest rank touches beyond an even share, against the least any plan needs\n";
  out << "  " << std::left << std::setw(16) << "vertex" << std::right << std::setw(14) << "touched" << std::setw(14)
      << "lower bound" << std::setw(8) << "ratio"
      << "\n";
  double words = 0, bound = 0;
  for (const CertificateRow& r : rows) {
    out << "  " << std::left << std::setw(16) << graph.vertex(r.vertex).name << std::right << std::setw(14)
        << short_number(std::round(r.words)) << std::setw(14) << short_number(std::round(r.bound)) << std::setw(8)
        << ratio_text(r.words, r.bound) << "\n";
    words += r.words;
    bound += r.bound;
  }
  out << "  certificate total: " << short_number(std::round(words)) << " against " << short_number(std::round(bound))
      << " (ratio " << ratio_text(words, bound) << ")\n";
  return out.str();
}

void write_plan(io::JsonWriter& j, const Graph& graph, const FittedPlan& fitted) {
  const Plan& plan = fitted.plan;
  j.member("procs", plan.procs).member("planner", plan.planner).member("proposed_by", fitted.proposed_by);
  j.member("procs_reason", fitted.procs_reason);
  j.member("cost_model", partition::cost_model_name(plan.cost_model)).member("total_cost", plan.total_cost);
  j.member("estimated_seconds", fitted.estimated_seconds()).key("failure_agreements");
  io::write_agreements(j, io::Agreements::of(fitted.dry_run));
  j.key("screening");
  io::write_screening(j, io::Screening::of(fitted.schedule));
  j.key("sliced");
  if (fitted.sliced) {
    const SlicedGraph& sliced = *fitted.sliced;
    j.begin_object().member("value", sliced.value).member("dimension", sliced.dimension);
    j.member("label", std::string(1, graph.vertex(*graph.find(sliced.value + "__pass0")).slice->label));
    j.member("passes", sliced.passes).member("vertices_per_pass", sliced.region_size).end_object();
  } else {
    j.null();
  }
  j.member("partitions_considered", plan.partitions_considered).key("nodes").begin_array();
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const PartitionVector& d = plan.partitions[v];
    const VertexCost& c = plan.costs[v];
    j.begin_object().member("name", vertex.name).member("equation", vertex.einsum->equation());
    j.key("inputs").begin_array();
    for (VertexId u : vertex.inputs) j.value(graph.vertex(u).name);
    j.end_array().member("shape", vertex.bound).key("partition").begin_object();
    for (std::size_t k = 0; k < d.labels().size(); ++k) j.member(std::string(1, d.labels()[k]), d.parts()[k]);
    j.end_object().key("cost").begin_object();
    j.member("join", c.join).member("agg", c.agg).member("repartition", c.repartition).end_object();
    if (vertex.slice)
      j.key("pass")
          .begin_object()
          .member("label", std::string(1, vertex.slice->label))
          .member("pass", vertex.slice->pass)
          .member("passes", vertex.slice->passes)
          .end_object();
    j.end_object();
  }
  const std::vector<CertificateRow> rows = certificate(graph, fitted);
  double words = 0, bound = 0;
  j.end_array().key("certificate").begin_object().member("ranks", fitted.dry_run.ranks.size()).key("vertices");
  j.begin_array();
  for (const CertificateRow& r : rows) {
    j.begin_object().member("name", graph.vertex(r.vertex).name).member("touched", r.words);
    j.member("lower_bound", r.bound).end_object();
    words += r.words;
    bound += r.bound;
  }
  j.end_array().member("touched", words).member("lower_bound", bound).end_object();
  j.key("nary").begin_array();
  for (const NaryEinsum& n : graph.nary_einsums()) {
    j.begin_object().member("name", graph.vertex(n.steps.back()).name).member("equation", n.equation);
    j.member("method", n.method).member("flops", n.flops).member("largest_intermediate", n.largest_intermediate);
    j.key("steps").begin_array();
    for (VertexId v : n.steps) j.value(graph.vertex(v).name);
    j.end_array().end_object();
  }
  j.end_array();
}

std::string plan_json(const Graph& graph, const FittedPlan& fitted) {
  io::JsonWriter j = io::json_report();
  write_plan(j, graph, fitted);
  return j.end_object().str();
}

std::string plan_dot(const Graph& graph, const FittedPlan& fitted) {
  const Plan& plan = fitted.plan;
  std::ostringstream g;
  g << "digraph plan {\n  graph [label=\"" << headline(fitted)
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
  // Each n-ary einsum's binary vertices in a box labelled with the expression and its order.
  for (std::size_t c = 0; c < graph.nary_einsums().size(); ++c) {
    const NaryEinsum& n = graph.nary_einsums()[c];
    g << "  subgraph cluster_nary" << c << " {\n    label=\"" << graph.vertex(n.steps.back()).name << " = einsum(\\\""
      << n.equation << "\\\")\\n"
      << order_text(graph, n) << "\"; style=rounded; fontsize=10;\n   ";
    for (VertexId v : n.steps) g << " v" << v << ";";
    g << "\n  }\n";
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
        << short_number(partition::edge_cost(graph, plan.partitions, v, k, plan.cost_model))
        << "\", color=red, penwidth=2];\n";
    }
  }
  g << "}\n";
  return g.str();
}

}  // namespace einrel::cli
