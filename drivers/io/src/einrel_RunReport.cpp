#include <einrel_PlanExport.hpp>
#include <einrel_RunReport.hpp>

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace einrel::cli {

Extent RunReport::floats_moved() const {
  Extent n = 0;
  for (const auto& v : vertices) n += v.floats_moved;
  return n;
}

void write_ranks(io::JsonWriter& j, const std::vector<engine::RankTraffic>& ranks,
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

void write_vertex(io::JsonWriter& j, const VertexReport& v) {
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

void write_screening(io::JsonWriter& j, const Screening& s) {
  if (s.threshold <= 0) {
    j.null();
    return;
  }
  j.begin_object().member("threshold", s.threshold).member("screened_products", s.products);
  j.member("truncated_blocks", s.blocks).end_object();
}

std::string report_json(const RunReport& r) {
  io::JsonWriter j = io::json_report();
  j.member("graph", r.graph).member("num_ranks", r.num_ranks).member("computing_ranks", r.computing_ranks);
  j.member("backend", r.backend).member("threads", r.threads).member("planner", r.planner);
  j.member("cost_model", r.cost_model).member("procs", r.procs).member("transitions", r.transitions);
  j.member("objective", r.objective).member("proposed_by", r.proposed_by).member("procs_reason", r.procs_reason);
  j.member("check_max_relative_error", r.check_error).member("predicted_cost", r.predicted_cost);
  j.member("estimated_seconds", r.estimated_seconds).key("screening");
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

void print_rank_table(const std::vector<engine::RankTraffic>& ranks, std::ostream& out) {
  auto row = [&](const std::string& name, const engine::RankTraffic& t) {
    out << "  " << std::left << std::setw(8) << name << std::right << std::setw(16) << t.floats_sent << std::setw(18)
        << t.floats_received << std::setw(18) << t.peak_block_bytes << std::setw(10) << t.tuples << "\n";
  };
  out << "  " << std::left << std::setw(8) << "rank" << std::right << std::setw(16) << "floats sent" << std::setw(18)
      << "floats received" << std::setw(18) << "peak block bytes" << std::setw(10) << "tuples"
      << "\n";
  constexpr std::size_t listed = 16;  // beyond that, the largest figure of each column
  if (ranks.size() <= listed) {
    for (std::size_t k = 0; k < ranks.size(); ++k) row(std::to_string(k), ranks[k]);
    return;
  }
  engine::RankTraffic most;
  for (const auto& t : ranks) {
    most.floats_sent = std::max(most.floats_sent, t.floats_sent);
    most.floats_received = std::max(most.floats_received, t.floats_received);
    most.peak_block_bytes = std::max(most.peak_block_bytes, t.peak_block_bytes);
    most.tuples = std::max(most.tuples, t.tuples);
  }
  row("max", most);
}

std::string seconds_text(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(6) << seconds << " s";
  return s.str();
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

namespace {

// The vertex table: per vertex its times on the timed rank, split into the four parts that add up to its
// seconds, and the floats moved for it; then the column sums.
void print_vertex_table(const RunReport& r, std::ostream& out) {
  // Each text column as wide as its longest entry, plus two blanks.
  std::size_t widths[4] = {6, 8, 5, 9};  // "vertex", "equation", "shape", "partition"
  for (const auto& v : r.vertices) {
    const std::size_t lengths[4] = {v.name.size(), v.equation.size(), to_string(v.bound).size(), v.partition.size()};
    for (int c = 0; c < 4; ++c) widths[c] = std::max(widths[c], lengths[c]);
  }
  for (std::size_t& w : widths) w += 2;
  auto texts = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
    out << "  " << std::left << std::setw(static_cast<int>(widths[0])) << a << std::setw(static_cast<int>(widths[1]))
        << b << std::setw(static_cast<int>(widths[2])) << c << std::setw(static_cast<int>(widths[3])) << d
        << std::right;
  };
  auto times = [&out](const engine::VertexTimes& t) {
    for (double seconds : {t.read_seconds, t.exchange_seconds, t.kernel_seconds, t.reduce_seconds, t.seconds()})
      out << std::setw(10) << std::fixed << std::setprecision(6) << seconds;
  };
  texts("vertex", "equation", "shape", "partition");
  for (const char* column : {"read", "exchange", "kernels", "reduce", "seconds"}) out << std::setw(10) << column;
  out << std::setw(14) << "floats moved"
      << "\n";
  engine::VertexTimes sum;
  Extent moved = 0;
  for (const auto& v : r.vertices) {
    texts(v.name, v.equation, to_string(v.bound), v.partition);
    times(v.times);
    out << std::setw(14) << v.floats_moved << "\n";
    sum += v.times;
    moved += v.floats_moved;
  }
  const std::string label = "evaluation (times of rank " + std::to_string(r.timed_rank) + ", the slowest)";
  const std::size_t width = std::max(widths[0] + widths[1] + widths[2] + widths[3], label.size() + 2);
  out << "  " << std::left << std::setw(static_cast<int>(width)) << label << std::right;
  times(sum);
  out << std::setw(14) << moved << "\n";
}

}  // namespace

void print_summary(const RunReport& r, std::ostream& out) {
  out << "einrel run " << r.graph << "\n"
      << "  ranks: " << r.num_ranks << " started, " << r.computing_ranks << " computing; backend: " << r.backend << " ("
      << r.threads << " thread" << (r.threads == 1 ? "" : "s") << ")\n"
      << (r.thread_note.empty() ? "" : "  note: " + r.thread_note + "\n") << "  planner: " << r.planner << " for "
      << procs_text(r.procs, r.procs_reason) << "; predicted cost: "
      << (r.predicted_cost ? io::json_number(*r.predicted_cost) + " floats (" + r.cost_model + " cost model)"
                           : std::string("n/a"))
      << "\n";
  print_vertex_table(r, out);
  for (const auto& v : r.vertices) {
    for (const auto& o : v.operands)
      if (o.path == "collectives") out << "  collectives: " << o.name << " -> " << v.name << ": " << o.steps << "\n";
    if (v.deferred_reduction) out << "  reduction of " << v.name << " deferred to its reader's collectives\n";
    if (!v.operands.empty() && v.operands[0].path == "partials")
      out << "  " << v.name << " combines the partial results of " << v.operands[0].name << " and "
          << v.operands[1].name << " where they lie\n";
  }
  print_rank_table(r.ranks, out);
  if (!r.peak_allocated_bytes.empty()) {
    out << "  peak allocated bytes (blocks, cached blocks, exchange buffers): "
        << *std::max_element(r.peak_allocated_bytes.begin(), r.peak_allocated_bytes.end()) << " on the busiest rank";
    if (!r.estimated_peak_allocated_bytes.empty())
      out << " (estimated: "
          << *std::max_element(r.estimated_peak_allocated_bytes.begin(), r.estimated_peak_allocated_bytes.end()) << ")";
    out << "\n";
  }
  out << "  total: " << seconds_text(r.total_seconds()) << " = memory " << seconds_text(r.memory_seconds)
      << " + inputs " << seconds_text(r.input_seconds) << " + evaluation " << seconds_text(r.evaluation_seconds())
      << "; floats moved: " << r.floats_moved() << "\n";
  for (const NonFiniteReport& n : r.nonfinite_outputs)
    out << "  non-finite values: output " << n.name << " holds " << n.nan << " NaN and " << n.inf << " ±Inf\n";
  if (r.check_error)
    out << "  check: max relative error " << std::scientific << std::setprecision(2) << *r.check_error
        << " against the unpartitioned evaluation (tolerance " << *r.check_tolerance << ")\n";
  out.unsetf(std::ios::floatfield);
}

}  // namespace einrel::cli
