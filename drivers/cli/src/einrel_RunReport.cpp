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
  j.member("partition", v.partition).member("seconds", v.seconds).member("kernel_seconds", v.kernel_seconds);
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

std::string report_json(const RunReport& r) {
  io::JsonWriter j = io::json_report();
  j.member("graph", r.graph).member("num_ranks", r.num_ranks).member("computing_ranks", r.computing_ranks);
  j.member("backend", r.backend).member("threads", r.threads).member("planner", r.planner);
  j.member("cost_model", r.cost_model).member("procs", r.procs).member("transitions", r.transitions);
  j.member("objective", r.objective).member("proposed_by", r.proposed_by);
  j.member("check_max_relative_error", r.check_error).member("predicted_cost", r.predicted_cost);
  j.member("estimated_seconds", r.estimated_seconds);
  j.member("floats_moved", r.floats_moved()).member("total_seconds", r.total_seconds);
  j.member("input_seconds", r.input_seconds).member("memory_seconds", r.memory_seconds).key("ranks");
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

void print_summary(const RunReport& r, std::ostream& out) {
  out << "einrel run " << r.graph << "\n"
      << "  ranks: " << r.num_ranks << " started, " << r.computing_ranks << " computing; backend: " << r.backend << " ("
      << r.threads << " thread" << (r.threads == 1 ? "" : "s") << ")\n"
      << "  planner: " << r.planner << " for p = " << r.procs << "; predicted cost: "
      << (r.predicted_cost ? io::json_number(*r.predicted_cost) + " floats (" + r.cost_model + " cost model)"
                           : std::string("n/a"))
      << "\n";
  out << "  " << std::left << std::setw(16) << "vertex" << std::setw(20) << "equation" << std::setw(18) << "shape"
      << std::setw(20) << "partition" << std::right << std::setw(12) << "seconds" << std::setw(14) << "floats moved"
      << "\n";
  for (const auto& v : r.vertices)
    out << "  " << std::left << std::setw(16) << v.name << std::setw(20) << v.equation << std::setw(18)
        << to_string(v.bound) << std::setw(20) << v.partition << std::right << std::setw(12) << std::fixed
        << std::setprecision(6) << v.seconds << std::setw(14) << v.floats_moved << "\n";
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
  out << "  total: " << std::fixed << std::setprecision(6) << r.total_seconds << " s (inputs: " << r.input_seconds
      << " s, memory: " << r.memory_seconds << " s), floats moved: " << r.floats_moved() << "\n";
  for (const NonFiniteReport& n : r.nonfinite_outputs)
    out << "  non-finite values: output " << n.name << " holds " << n.nan << " NaN and " << n.inf << " ±Inf\n";
  if (r.check_error)
    out << "  check: max relative error " << std::scientific << std::setprecision(2) << *r.check_error
        << " against the unpartitioned evaluation (tolerance " << *r.check_tolerance << ")\n";
  out.unsetf(std::ios::floatfield);
}

}  // namespace einrel::cli
