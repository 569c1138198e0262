#include <einrel_AtomicFile.hpp>
#include <einrel_Carried.hpp>
#include <einrel_Gradient.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_Json.hpp>
#include <einrel_RunData.hpp>
#include <einrel_TrainCommand.hpp>
#include <einrel_Wait.hpp>

#include <iomanip>
#include <sstream>

namespace einrel::cli {
namespace {

using comm::collectively;
using comm::Communicator;
using comm::complete;

std::string report_json(const TrainOptions& o, const engine::FittedPlan& fitted, int ranks, double carried,
                        const std::vector<double>& losses, const std::vector<double>& seconds,
                        const std::vector<Extent>& floats) {
  const partition::Plan& plan = fitted.plan;
  io::JsonWriter j = io::json_report();
  j.member("command", "train").member("graph", o.run.graph).member("loss", o.loss).member("params", o.params);
  j.member("lr", o.lr).member("steps", o.steps).member("planner", plan.planner).member("procs", plan.procs);
  j.member("num_ranks", ranks).member("predicted_cost_per_step", plan.total_cost + carried);
  j.member("estimated_seconds_per_step", fitted.estimated_seconds()).member("proposed_by", fitted.proposed_by);
  j.member("predicted_carried_cost_per_step", carried).member("losses", losses);
  j.member("seconds_per_step", seconds).member("floats_moved_per_step", floats);
  return j.end_object().str();
}

}  // namespace

void train_graph(MPI_Comm user_comm, const TrainOptions& options, std::ostream& out) {
  const Communicator comm(user_comm);
  if (!options.run.input) throw Error("train needs --input IN.h5 with the parameters' initial values and the data");
  if (!options.run.output) throw Error("train needs --output OUT.h5 for the parameters after the last step");
  SgdStep step;
  Sources sources;
  collectively(comm, [&] {
    step = sgd_step_graph(read_graph_file(options.run.graph), options.loss, options.params, options.lr);
    sources = input_sources(step.graph, options.run);
  });
  engine::PipelineOptions engine(options.run.engine);
  engine.failure = failure_injection();
  engine.input_reads = engine::InputReads::move;  // the data stays in memory across the steps
  io::InputFiles files(comm);
  open_input_files(files, step.graph, sources);
  Session session(comm, step.graph, engine, step.carried);
  const partition::Plan& plan = session.plan();
  // A plan costed by its dry run counts the carried values already: each W lives where W' was made.
  const double carried = session.fitted().costed_by_dry_run
                             ? 0.0
                             : partition::carried_cost(session.graph(), plan.partitions, step.carried, plan.cost_model);
  session.prepare(Exec{});
  Values values = InputLoader(files, session.graph(), sources, options.run).load(session);

  std::vector<double> losses, seconds;
  std::vector<Extent> floats;
  for (int k = 0; k < options.steps; ++k) {
    MPI_Request request;  // time each step from a common start
    complete(MPI_Ibarrier(comm.get(), &request), request, "MPI_Ibarrier");
    const double start = MPI_Wtime();
    auto result = session.execute(Exec{}, values);
    const double mine[2] = {MPI_Wtime() - start, static_cast<double>(result.traffic.floats_sent)};
    double all[2];
    complete(MPI_Iallreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm.get(), &request), request, "MPI_Iallreduce");
    Extent sent = result.traffic.floats_sent, total = 0;
    complete(MPI_Iallreduce(&sent, &total, 1, MPI_INT64_T, MPI_SUM, comm.get(), &request), request, "MPI_Iallreduce");
    seconds.push_back(all[0]);
    floats.push_back(total);
    losses.push_back(scalar_value(comm, *result.values[step.loss]));
    // Each W' lies in the layout the schedule reads W in (Schedule's carried pairs): no data moves here.
    for (const auto& [w, next] : step.carried) values[w] = std::move(result.values[next]);
  }

  std::vector<std::pair<std::string, VertexId>> params;
  for (const auto& [w, next] : step.carried) params.emplace_back(session.graph().vertex(w).name, w);
  const bool root = comm.rank() == 0;
  std::optional<io::AtomicFile> report_file;
  collectively(comm, [&] {
    if (options.run.report && root) {
      report_file.emplace(*options.run.report);
      report_file->write_text(report_json(options, session.fitted(), comm.size(), carried, losses, seconds, floats));
    }
    inject_at_write(session.options(), comm.rank(), params);
  });
  write_values(comm, session.graph(), values, params, *options.run.output);
  collectively(comm, [&] {
    if (report_file) report_file->commit();
  });
  if (!root) return;
  out << "einrel train: " << options.steps << " SGD steps of " << options.run.graph << " on " << comm.size()
      << " rank(s), p = " << plan.procs << ", planner " << plan.planner << "\n";
  for (std::size_t k = 0; k < losses.size(); ++k)
    out << "step " << k + 1 << ": loss " << io::json_number(losses[k]) << ", " << std::fixed << std::setprecision(6)
        << seconds[k] << " s, " << floats[k] << " floats moved\n"
        << std::defaultfloat;
  out << "wrote " << params.size() << " parameter(s) to " << *options.run.output << "\n";
  if (options.run.report) out << "wrote report to " << *options.run.report << "\n";
}

}  // namespace einrel::cli
