#include <einrel_PlanExport.hpp>
#include <einrel_RunReport.hpp>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace einrel {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double x) {
  std::ostringstream s;
  s << std::setprecision(9) << x;
  return s.str();
}

Extent RunReport::floats_moved() const {
  Extent n = 0;
  for (const auto& v : vertices) n += v.floats_moved;
  return n;
}

std::string ranks_json(const std::vector<engine::RankTraffic>& ranks, const std::vector<std::size_t>& allocated,
                       const std::vector<std::size_t>& estimated) {
  std::ostringstream j;
  j << "[";
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    j << (r ? "," : "") << "\n    {\"rank\": " << r << ", \"floats_sent\": " << ranks[r].floats_sent
      << ", \"floats_received\": " << ranks[r].floats_received
      << ", \"peak_block_bytes\": " << ranks[r].peak_block_bytes << ", \"tuples\": " << ranks[r].tuples;
    if (allocated.size() == ranks.size()) j << ", \"peak_allocated_bytes\": " << allocated[r];
    if (estimated.size() == ranks.size()) j << ", \"estimated_peak_allocated_bytes\": " << estimated[r];
    j << "}";
  }
  j << (ranks.empty() ? "]" : "\n  ]");
  return j.str();
}

std::string report_json(const RunReport& r) {
  std::ostringstream j;
  j << "{\n  \"schema_version\": " << partition::json_schema_version << ",\n  \"graph\": " << json_string(r.graph)
    << ",\n  \"num_ranks\": " << r.num_ranks << ",\n  \"computing_ranks\": " << r.computing_ranks
    << ",\n  \"backend\": " << json_string(r.backend) << ",\n  \"threads\": " << r.threads
    << ",\n  \"planner\": " << json_string(r.planner) << ",\n  \"cost_model\": " << json_string(r.cost_model)
    << ",\n  \"procs\": " << r.procs << ",\n  \"transitions\": " << json_string(r.transitions)
    << ",\n  \"check_max_relative_error\": " << (r.check_error ? json_number(*r.check_error) : "null")
    << ",\n  \"predicted_cost\": " << (r.predicted_cost ? json_number(*r.predicted_cost) : "null")
    << ",\n  \"floats_moved\": " << r.floats_moved() << ",\n  \"total_seconds\": " << json_number(r.total_seconds)
    << ",\n  \"input_seconds\": " << json_number(r.input_seconds)
    << ",\n  \"memory_seconds\": " << json_number(r.memory_seconds)
    << ",\n  \"ranks\": " << ranks_json(r.ranks, r.peak_allocated_bytes, r.estimated_peak_allocated_bytes)
    << ",\n  \"nonfinite_outputs\": [";
  for (std::size_t i = 0; i < r.nonfinite_outputs.size(); ++i)
    j << (i ? ", " : "") << "{\"name\": " << json_string(r.nonfinite_outputs[i].name)
      << ", \"nan\": " << r.nonfinite_outputs[i].nan << ", \"inf\": " << r.nonfinite_outputs[i].inf << "}";
  j << "]"
    << ",\n  \"vertices\": [";
  for (std::size_t i = 0; i < r.vertices.size(); ++i) {
    const VertexReport& v = r.vertices[i];
    j << (i ? "," : "") << "\n    {\"name\": " << json_string(v.name) << ", \"equation\": " << json_string(v.equation)
      << ", \"shape\": " << to_string(v.bound) << ", \"partition\": " << json_string(v.partition)
      << ", \"seconds\": " << json_number(v.seconds) << ", \"kernel_seconds\": " << json_number(v.kernel_seconds)
      << ", \"floats_moved\": " << v.floats_moved
      << ", \"deferred_reduction\": " << (v.deferred_reduction ? "true" : "false") << ", \"operands\": [";
    for (std::size_t k = 0; k < v.operands.size(); ++k) {
      const OperandReport& o = v.operands[k];
      j << (k ? ", " : "") << "{\"name\": " << json_string(o.name) << ", \"path\": " << json_string(o.path);
      if (!o.steps.empty()) j << ", \"steps\": " << json_string(o.steps);
      j << "}";
    }
    j << "]}";
  }
  j << (r.vertices.empty() ? "]" : "\n  ]") << "\n}\n";
  return j.str();
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
      << (r.predicted_cost ? json_number(*r.predicted_cost) + " floats (" + r.cost_model + " cost model)"
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

}  // namespace einrel
