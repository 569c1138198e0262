#include <einrel_Error.hpp>
#include <einrel_Json.hpp>
#include <einrel_ReshardCommand.hpp>

#include <iomanip>
#include <optional>
#include <sstream>

namespace einrel::cli {

using redistribute::mesh::ReshardPlan;
using redistribute::mesh::ReshardStep;

namespace {

std::string dims_text(const ReshardStep& step) {
  if (step.dims.empty()) return "-";
  return step.dims.size() == 1 ? std::to_string(step.dims[0])
                               : std::to_string(step.dims[0]) + "->" + std::to_string(step.dims[1]);
}

std::string axes_text(const ReshardStep& step, const ReshardPlan& plan) {
  std::string s;
  for (const std::string& a : redistribute::mesh::user_axes(step.axes, plan.mesh)) s += (s.empty() ? "" : ",") + a;
  return s.empty() ? "-" : s;
}

}  // namespace

ReshardPlan plan_reshard(const ReshardOptions& options) {
  const auto mesh = redistribute::mesh::DeviceMesh::parse(options.mesh, "--mesh");
  const auto from = redistribute::mesh::parse_dist_type(options.from, mesh, "--from");
  const auto to = redistribute::mesh::parse_dist_type(options.to, mesh, "--to", redistribute::mesh::global_shape(from));
  return redistribute::mesh::synthesize_reshard(mesh, from, to);
}

std::string reshard_text(const ReshardPlan& plan, Dtype dtype, const ReshardRun* run) {
  const auto bytes = [&](Extent elements) {
    return std::to_string(elements * static_cast<Extent>(dtype_bytes(dtype))) + " bytes";
  };
  std::ostringstream t;
  t << "reshard " << str(plan.from, plan.mesh) << " -> " << str(plan.to, plan.mesh) << " on " << plan.mesh.str() << " ("
    << plan.mesh.size() << " devices; prime-factored " << plan.primes.str() << "), " << dtype_name(dtype) << "\n";
  if (plan.steps.empty())
    t << "  no steps: every device already holds its target tile\n";
  else
    t << "  step  op             axes          dims   local shape           cost  type after\n";
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const ReshardStep& s = plan.steps[k];
    t << "  " << std::left << std::setw(6) << k + 1 << std::setw(15) << collective_name(s.op) << std::setw(14)
      << axes_text(s, plan) << std::setw(7) << dims_text(s) << std::setw(16) << to_string(s.local_shape) << std::right
      << std::setw(10) << s.cost << "  " << str(s.after, plan.primes) << "\n";
  }
  t << "  cost: " << plan.cost << " elements per device (" << bytes(plan.cost)
    << "); naive allgather+slice: " << plan.naive_cost << " (" << bytes(plan.naive_cost) << ")\n"
    << "  memory height: " << plan.memory_height << " elements (" << bytes(plan.memory_height)
    << "); local size of the source " << plan.source_local_size << ", of the target " << plan.target_local_size
    << "\n  synthesis: " << std::fixed << std::setprecision(3) << plan.synthesis_seconds * 1e3 << " ms\n";
  if (run) {
    // a peer's line says its time over the synthesized one
    const auto line = [&](const char* what, double seconds, Extent wrong, bool peer = true) {
      t << "    " << std::left << std::setw(17) << what << std::right << std::setprecision(6) << seconds << " s";
      if (peer) t << " (" << std::setprecision(2) << seconds / run->synthesized_seconds << "x the synthesized)";
      t << (wrong ? ", " + std::to_string(wrong) + " elements wrong" : std::string()) << "\n";
    };
    t << "  executed on " << plan.mesh.size() << " ranks, median of " << run->repetitions
      << " runs each (slowest rank), every element of the target checked:\n";
    line("synthesized", run->synthesized_seconds, run->wrong_synthesized, false);
    line("allgather+slice", run->naive_seconds, run->wrong_naive);
    if (run->point_to_point_seconds)
      line("point-to-point", *run->point_to_point_seconds, run->wrong_point_to_point);
    else
      t << "    point-to-point   - (a pending reduction has no block layout)\n";
  }
  return t.str();
}

std::string reshard_json(const ReshardPlan& plan, Dtype dtype, const ReshardRun* run) {
  io::JsonWriter j = io::json_report();
  j.key("mesh").begin_array();
  for (const redistribute::mesh::MeshAxis& a : plan.mesh.axes())
    j.begin_object().member("axis", a.name).member("size", a.size).end_object();
  j.end_array().member("from", str(plan.from, plan.mesh)).member("to", str(plan.to, plan.mesh));
  j.member("dtype", dtype_name(dtype)).key("steps").begin_array();
  for (const ReshardStep& s : plan.steps) {
    j.begin_object()
        .member("op", collective_name(s.op))
        .member("axes", redistribute::mesh::user_axes(s.axes, plan.mesh));
    j.member("dims", s.dims).member("type", str(s.after, plan.primes)).member("local_shape", s.local_shape);
    j.member("cost", s.cost).end_object();
  }
  j.end_array().member("cost", plan.cost).member("memory_height", plan.memory_height);
  j.member("source_local_size", plan.source_local_size).member("target_local_size", plan.target_local_size);
  j.member("naive_cost", plan.naive_cost).member("synthesis_seconds", plan.synthesis_seconds);
  if (run) {
    j.key("execute").begin_object().member("ranks", plan.mesh.size()).member("repetitions", run->repetitions);
    j.member("synthesized_seconds", run->synthesized_seconds).member("naive_seconds", run->naive_seconds);
    j.member("point_to_point_seconds", run->point_to_point_seconds);
    j.member("mismatches", run->wrong_synthesized + run->wrong_naive + run->wrong_point_to_point).end_object();
  }
  return j.end_object().str();
}

void run_reshard(MPI_Comm comm, const ReshardOptions& options, std::ostream& out) {
  if (options.format != "text" && options.format != "json")
    throw Error("unknown --format '" + options.format + "' (available: text, json)");
  const ReshardPlan plan = plan_reshard(options);
  std::optional<ReshardRun> run;
  if (options.execute) {  // a failure on one rank (outside a collective) ends every rank with its message
    const comm::Communicator ranks(comm);
    comm::collectively(ranks, [&] { run = measure_reshard(ranks, plan, options.dtype, options.repetitions); });
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const ReshardRun* measured = run ? &*run : nullptr;
  if (rank == 0)
    out << (options.format == "json" ? reshard_json(plan, options.dtype, measured)
                                     : reshard_text(plan, options.dtype, measured));
  if (run) {
    const Extent wrong = run->wrong_synthesized + run->wrong_naive + run->wrong_point_to_point;
    if (wrong)
      throw Error("--execute: " + std::to_string(wrong) + " elements of the target differ from the source's (" +
                  std::to_string(run->wrong_synthesized) + " synthesized, " + std::to_string(run->wrong_naive) +
                  " allgather+slice, " + std::to_string(run->wrong_point_to_point) + " point-to-point)");
  }
}

}  // namespace einrel::cli
