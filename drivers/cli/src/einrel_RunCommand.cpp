#include <einrel_AtomicFile.hpp>
#include <einrel_CounterRandom.hpp>
#include <einrel_Evaluator.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_Launcher.hpp>
#include <einrel_ParallelHdf5.hpp>
#include <einrel_Planner.hpp>
#include <einrel_RunCommand.hpp>
#include <einrel_RunData.hpp>
#include <einrel_RunSummary.hpp>
#include <einrel_Session.hpp>
#include <einrel_Wait.hpp>

#include <Kokkos_Core.hpp>
#include <Teuchos_TimeMonitor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>

namespace einrel::cli {
namespace {

using comm::collectively;
using comm::Communicator;
using comm::complete;
template <class Scalar>
using Distributed = redistribute::DistributedTensorRelation<Scalar, Memory>;

// Collective: the whole of a distributed tensor on rank 0 (on the host), for --check only.
template <class Scalar>
std::vector<double> gather_on_root(const Distributed<Scalar>& d) {
  const redistribute::BlockLayout root(BlockGrid(d.bound(), std::vector<Extent>(d.bound().size(), 1)),
                                       redistribute::Placement::owners({0}, d.comm().size()));
  redistribute::Exchange<Memory> exchange(d.comm());
  const auto whole = redistribute::redistribute(Exec{}, exchange, d, root);
  std::vector<double> values;
  for (const auto& [key, block] : whole.local())
    for (Scalar x : tensor_to_host(block)) values.push_back(x);
  return values;
}

// max|a - b| / max|b| over all elements (0 when both are zero): the normwise relative difference.
// The largest difference over the largest finite magnitude of b. Non-finite elements agree when both are NaN
// or both the same infinity (IEEE arithmetic gives both evaluations the same ones); any other disagreement
// involving one is an infinite difference.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
      const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i];
      if (!same) diff = std::numeric_limits<double>::infinity();
      continue;
    }
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff == 0 ? 0.0 : diff / std::max(scale, std::numeric_limits<double>::min());
}

// Bound for --check: partitioning changes only the order in which ⊕ combines terms, so the difference
// grows like the rounding of the longest aggregation (sqrt of its length for random signs).
double check_tolerance(const Graph& graph) {
  double tol = 0;
  for (const Vertex& v : graph.vertices()) {
    if (v.is_input()) continue;
    Extent terms = 1;
    for (char c : v.resolved->aggregated_labels()) terms *= v.resolved->extent(c);
    const double eps =
        v.dtype == Dtype::f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    tol = std::max(tol, 100 * eps * std::sqrt(static_cast<double>(terms)));
  }
  return tol;
}

// Collective: --check. Rank 0 evaluates the graph unpartitioned on whole inputs (read or generated
// again) and compares every output, gathered to it, with the engine's. Returns the largest difference.
double check_against_single_rank(const Session& session, InputLoader& loader, const Values& results) {
  const Communicator& comm = session.comm();
  // The graph as given, not as sliced (the values the run computes are found by name in session.graph()).
  const Graph& graph = session.given_graph();
  auto ran = [&](VertexId v) { return *session.graph().find(graph.vertex(v).name); };
  const bool root = comm.rank() == 0;
  std::vector<std::optional<AnyTensor<Memory>>> whole(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (!vertex.is_input()) continue;
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using T = Tensor<decltype(scalar), Memory>;
      engine::BoxedBlocks<decltype(scalar), Memory> blocks;
      if (root)
        blocks.emplace_back(Box{std::vector<Extent>(vertex.bound.size(), 0), vertex.bound},
                            T::uninitialized(vertex.name, vertex.bound));
      loader.fill(ran(v), blocks, engine::ReadCall::collective);
      if (root) whole[v] = blocks[0].second;
    });
  }
  std::optional<Evaluation<Memory>> reference;
  collectively(comm, [&] {
    if (root) reference = evaluate_unpartitioned(Exec{}, graph, std::move(whole));
  });
  double error = 0;
  for (VertexId v : graph.outputs()) {
    const std::vector<double> got = std::visit([](const auto& d) { return gather_on_root(d); }, *results[ran(v)]);
    if (!root) continue;
    const std::vector<double> want = std::visit(
        [](const auto& t) {
          const auto host = tensor_to_host(t);
          return std::vector<double>(host.begin(), host.end());
        },
        *reference->values[v]);
    error = std::max(error, relative_difference(got, want));
  }
  MPI_Request request;
  complete(MPI_Ibcast(&error, 1, MPI_DOUBLE, 0, comm.get(), &request), request, "MPI_Ibcast");
  return error;
}

// Collective: --check, its error and tolerance in `report`; throws on every rank when the error exceeds it.
void check_run(const Session& session, InputLoader& loader, const Values& results, io::RunReport& report) {
  report.check_error = check_against_single_rank(session, loader, results);
  report.check_tolerance = check_tolerance(session.given_graph());
  collectively(session.comm(), [&] {
    if (!(*report.check_error <= *report.check_tolerance))
      throw Error("check failed: the distributed evaluation differs from the single-rank unpartitioned one by " +
                  std::to_string(*report.check_error) + " (relative), more than the tolerance " +
                  std::to_string(*report.check_tolerance));
  });
}

// Collective: the run's figures from every rank (Session::report), with the plan and schedule they ran.
io::RunReport gather_report(const Session& session, const RunOptions& options,
                            const engine::EngineResult<Memory>& result) {
  io::RunReport report =
      io::run_report(session.graph(), session.fitted(), session.report(Exec{}, result), session.options().objective);
  report.graph = options.graph;
  report.backend = Exec::name();
  report.threads = Exec{}.concurrency();
  report.thread_note = thread_binding_note();
  return report;
}

// The one-line progress of every finished vertex on rank 0 (--progress).
std::function<void(VertexId, double)> progress_printer(const Graph& graph) {
  std::vector<std::string> names;
  for (const Vertex& v : graph.vertices()) names.push_back(v.name);
  std::size_t total = 0;
  for (const Vertex& v : graph.vertices()) total += v.is_input() ? 0 : 1;
  auto done = std::make_shared<std::size_t>(0);
  return [names, total, done](VertexId v, double elapsed) {
    std::cerr << "einrel: vertex " << ++*done << " of " << total << " (" << names[v] << ") done at " << std::fixed
              << elapsed << " s" << std::endl;
  };
}

}  // namespace

void run_graph(MPI_Comm comm, const RunOptions& options, std::ostream& out) {
  std::optional<Graph> graph;
  collectively(Communicator(comm), [&] { graph = read_graph_file(options.graph); });
  run_built_graph(comm, std::move(*graph), options, out);
}

io::RunReport run_built_graph(MPI_Comm user_comm, Graph graph, const RunOptions& options, std::ostream& out) {
  const Communicator comm(user_comm);
  const bool root = comm.rank() == 0;
  engine::PipelineOptions engine(options.engine);
  engine.failure = failure_injection();
  if (options.progress && root) engine.on_vertex_done = progress_printer(graph);
  Sources sources;
  collectively(comm, [&] { sources = input_sources(graph, options); });
  bind_input_shapes(comm, graph, sources, options.random_seed, options.sparse);
  io::InputFiles files(comm);
  open_input_files(files, graph, sources);
  Session session(comm, std::move(graph), engine);
  BlockPool<Memory>::instance().reset_statistics();

  // Wall-clock phase timers (MPI_Wtime underneath).
  Teuchos::Time read_timer("einrel run: inputs"), warm_timer("einrel run: memory"), write_timer("einrel run: outputs");
  std::optional<engine::EngineResult<Memory>> result;
  {
    Teuchos::TimeMonitor timing(warm_timer);
    session.prepare(Exec{});
  }
  InputLoader loader(files, session.graph(), sources, options);
  Values inputs;
  {
    Teuchos::TimeMonitor timing(read_timer);
    inputs = loader.load(session);
  }
  // The evaluation is timed by the engine, per vertex and rank (engine::VertexMeasure).
  result = session.execute(Exec{}, std::move(inputs), loader.reader());
  io::RunReport report = gather_report(session, options, *result);
  const double mine[2] = {read_timer.totalElapsedTime(), warm_timer.totalElapsedTime()};
  double slowest[2];  // over the ranks
  MPI_Request request;
  complete(MPI_Iallreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, comm.get(), &request), request, "MPI_Iallreduce");
  report.input_seconds = slowest[0];
  report.memory_seconds = slowest[1];
  if (options.check) check_run(session, loader, result->values, report);

  // The report is staged first so that either every requested file appears or none does.
  std::optional<io::AtomicFile> report_file;
  collectively(comm, [&] {
    if (options.report && root) {
      report_file.emplace(*options.report);
      report_file->write_text(report_json(report));
    }
    inject_at_write(session.options(), comm.rank(), outputs_by_name(session.graph()));
  });
  if (options.output) {
    Teuchos::TimeMonitor timing(write_timer);
    // --sparse-output: the mask of every sparse value (not of the dense ones a sliced plan computes in pieces)
    std::vector<bool> masked(session.graph().size(), false);
    if (options.sparse_output) masked = sparse_values(session.graph());
    write_values(comm, session.graph(), result->values, outputs_by_name(session.graph()), *options.output, masked);
  }
  collectively(comm, [&] {
    if (report_file) report_file->commit();
  });
  if (!root) return report;
  print_summary(report, out);
  if (options.output)
    out << "wrote " << session.graph().outputs().size() << " output(s) to " << *options.output << " in "
        << seconds_text(write_timer.totalElapsedTime()) << "\n";
  if (options.report) out << "wrote report to " << *options.report << "\n";
  return report;
}

}  // namespace einrel::cli
