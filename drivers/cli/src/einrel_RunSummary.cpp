#include <einrel_PlanExport.hpp>
#include <einrel_RunSummary.hpp>

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace einrel::cli {

std::string seconds_text(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(6) << seconds << " s";
  return s.str();
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

namespace {

// The vertex table: per vertex its times on the timed rank, split into the four parts that add up to its
// seconds, and the floats moved for it; then the column sums.
void print_vertex_table(const io::RunReport& r, std::ostream& out) {
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

void print_summary(const io::RunReport& r, std::ostream& out) {
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
  for (const io::NonFiniteReport& n : r.nonfinite_outputs)
    out << "  non-finite values: output " << n.name << " holds " << n.nan << " NaN and " << n.inf << " ±Inf\n";
  if (r.check_error)
    out << "  check: max relative error " << std::scientific << std::setprecision(2) << *r.check_error
        << " against the unpartitioned evaluation (tolerance " << *r.check_tolerance << ")\n";
  out.unsetf(std::ios::floatfield);
}

}  // namespace einrel::cli
