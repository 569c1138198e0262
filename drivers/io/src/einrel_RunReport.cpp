#include <einrel_Reshard.hpp>
#include <einrel_RunReport.hpp>

#include <utility>

namespace einrel::io {

Extent RunReport::floats_moved() const {
  Extent n = 0;
  for (const auto& v : vertices) n += v.floats_moved;
  return n;
}

void write_ranks(JsonWriter& j, const std::vector<engine::RankTraffic>& ranks,
                 const std::vector<std::size_t>& allocated, const std::vector<std::size_t>& estimated) {
  j.begin_array();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    j.begin_object().member("rank", r).member("floats_sent", ranks[r].floats_sent);
    j.member("floats_received", ranks[r].floats_received).member("peak_block_bytes", ranks[r].peak_block_bytes);
    j.member("tuples", ranks[r].tuples).member("flops", static_cast<long long>(ranks[r].flops));
    if (allocated.size() == ranks.size()) j.member("peak_allocated_bytes", allocated[r]);
    if (estimated.size() == ranks.size()) j.member("estimated_peak_allocated_bytes", estimated[r]);
    j.end_object();
  }
  j.end_array();
}

namespace {

void write_vertex(JsonWriter& j, const VertexReport& v) {
  j.begin_object().member("name", v.name).member("equation", v.equation).member("shape", v.bound);
  const engine::VertexTimes& t = v.times;
  j.member("partition", v.partition).member("seconds", t.seconds()).member("read_seconds", t.read_seconds);
  j.member("exchange_seconds", t.exchange_seconds).member("kernel_seconds", t.kernel_seconds);
  j.member("reduce_seconds", t.reduce_seconds);
  j.member("floats_moved", v.floats_moved).member("deferred_reduction", v.deferred_reduction);
  j.key("operands").begin_array();
  for (const OperandReport& o : v.operands) {
    j.begin_object().member("name", o.name).member("path", o.path);
    if (!o.steps.empty()) j.member("steps", o.steps);
    j.end_object();
  }
  j.end_array().end_object();
}

}  // namespace

void write_screening(JsonWriter& j, const Screening& s) {
  if (s.threshold <= 0) {
    j.null();
    return;
  }
  j.begin_object().member("threshold", s.threshold).member("screened_products", s.products);
  j.member("truncated_blocks", s.blocks).end_object();
}

void write_agreements(JsonWriter& j, const Agreements& a) {
  j.begin_object().member("count", a.count).member("seconds", a.seconds).end_object();
}

std::string report_json(const RunReport& r) {
  JsonWriter j = json_report();
  j.member("graph", r.graph).member("num_ranks", r.num_ranks).member("computing_ranks", r.computing_ranks);
  j.member("backend", r.backend).member("threads", r.threads).member("planner", r.planner);
  j.member("cost_model", r.cost_model).member("procs", r.procs).member("transitions", r.transitions);
  j.member("objective", r.objective).member("proposed_by", r.proposed_by).member("procs_reason", r.procs_reason);
  j.member("check_max_relative_error", r.check_error).member("predicted_cost", r.predicted_cost);
  j.member("estimated_seconds", r.estimated_seconds).key("failure_agreements");
  write_agreements(j, r.agreements);
  j.key("screening");
  write_screening(j, r.screening);
  j.member("floats_moved", r.floats_moved()).member("total_seconds", r.total_seconds());
  j.member("memory_seconds", r.memory_seconds).member("input_seconds", r.input_seconds);
  j.member("evaluation_seconds", r.evaluation_seconds()).member("timed_rank", r.timed_rank).key("ranks");
  write_ranks(j, r.ranks, r.peak_allocated_bytes, r.estimated_peak_allocated_bytes);
  j.key("nonfinite_outputs").begin_array();
  for (const NonFiniteReport& n : r.nonfinite_outputs)
    j.begin_object().member("name", n.name).member("nan", n.nan).member("inf", n.inf).end_object();
  j.end_array().key("vertices").begin_array();
  for (const VertexReport& v : r.vertices) write_vertex(j, v);
  return j.end_array().end_object().str();
}

double RunReport::evaluation_seconds() const {
  double seconds = 0;
  for (const VertexReport& v : vertices) seconds += v.times.seconds();
  return seconds;
}

double RunReport::compute_seconds() const {
  double reads = 0;
  for (const VertexReport& v : vertices) reads += v.times.read_seconds;
  return evaluation_seconds() - reads;
}

RunReport run_report(const Graph& graph, const engine::FittedPlan& fitted, const engine::ExecutionReport& figures,
                     engine::Objective objective) {
  const partition::Plan& plan = fitted.plan;
  const engine::Schedule& schedule = fitted.schedule;
  RunReport report;
  report.num_ranks = static_cast<int>(figures.ranks.size());
  report.planner = plan.planner;
  report.cost_model = partition::cost_model_name(plan.cost_model);
  report.predicted_cost = plan.total_cost;
  report.estimated_seconds = fitted.estimated_seconds();
  report.agreements = Agreements::of(fitted.dry_run);
  report.objective = engine::objective_name(objective);
  report.proposed_by = fitted.proposed_by;
  report.screening = Screening::of(schedule);
  report.procs = plan.procs;
  report.procs_reason = fitted.procs_reason;
  report.timed_rank = figures.timed_rank;
  report.transitions = engine::transition_policy_name(schedule.transition_policy());
  report.ranks = figures.ranks;
  report.peak_allocated_bytes = figures.peak_allocated_bytes;
  report.estimated_peak_allocated_bytes = fitted.dry_run.peak_memory_bytes;
  report.computing_ranks = figures.computing_ranks;
  for (const engine::NonFiniteOutput& o : figures.nonfinite_outputs)
    report.nonfinite_outputs.push_back({graph.vertex(o.vertex).name, o.nan, o.inf});
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const engine::VertexFigures& f = figures.vertices[v];
    VertexReport entry;
    entry.name = vertex.name;
    entry.equation = vertex.einsum->equation();
    entry.bound = vertex.bound;
    entry.partition = plan.partitions[v].str();
    entry.times = f;
    entry.floats_moved = f.floats_moved;
    entry.deferred_reduction = schedule.deferred(v);
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      OperandReport& o = entry.operands.emplace_back();
      o.name = graph.vertex(vertex.inputs[k]).name;
      if (schedule.shared_operand(v, k) || schedule.on_partials(v)) {
        o.path = schedule.on_partials(v) ? "partials" : "shared";
        continue;
      }
      if (schedule.reads_again(v, k) || schedule.streamed(vertex.inputs[k])) {
        o.path = schedule.streamed(vertex.inputs[k]) ? "streamed" : "read";
        continue;
      }
      const engine::Transition& t = schedule.transition(v, k);
      o.path = engine::transition_path_name(t.path);
      if (t.plan) o.steps = redistribute::mesh::steps_text(*t.plan);
    }
    report.vertices.push_back(std::move(entry));
  }
  return report;
}

}  // namespace einrel::io
