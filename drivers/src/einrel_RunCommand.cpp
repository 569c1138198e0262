#include <einrel_AtomicFile.hpp>
#include <einrel_Evaluator.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_Hdf5Io.hpp>
#include <einrel_PartitionedEvaluator.hpp>
#include <einrel_Planner.hpp>
#include <einrel_RunCommand.hpp>
#include <einrel_RunReport.hpp>

#include <Kokkos_Core.hpp>
#include <Teuchos_TimeMonitor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

namespace einrel {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;

// Uniform values in [-1, 1), reproducible from the seed and the input's position in the graph.
io::HostData random_data(const Vertex& input, VertexId id, std::uint64_t seed) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(id)};
  std::mt19937_64 gen(seq);
  return dispatch_dtype(input.dtype, [&](auto scalar) -> io::HostData {
    using S = decltype(scalar);
    std::uniform_real_distribution<S> dist(-1, 1);
    std::vector<S> values(num_elements(input.bound));
    for (auto& x : values) x = dist(gen);
    return values;
  });
}

AnyTensor<Memory> to_device(const std::string& label, const Bound& bound, const io::HostData& data) {
  return std::visit([&](const auto& v) -> AnyTensor<Memory> { return tensor_from_host<Memory>(label, bound, v); },
                    data);
}

io::HostData to_host(const AnyTensor<Memory>& t) {
  return std::visit([](const auto& x) -> io::HostData { return tensor_to_host(x); }, t);
}

// max|a - b| / max|b| over all elements (0 when both are zero): the normwise relative difference.
double relative_difference(const io::HostData& a, const io::HostData& b) {
  return std::visit(
      [&](const auto& x) {
        const auto& y = std::get<std::decay_t<decltype(x)>>(b);
        double diff = 0, scale = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          const double d = std::abs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
          diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
          scale = std::max(scale, std::abs(static_cast<double>(y[i])));
        }
        return diff == 0 ? 0.0 : diff / std::max(scale, std::numeric_limits<double>::min());
      },
      a);
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

void run_on_root(int num_ranks, const RunOptions& options, std::ostream& out) {
  const Graph graph = read_graph_file(options.graph);
  if (options.input && options.random_seed) throw Error("give either --input FILE or --random SEED, not both");
  if (!options.input && !options.random_seed) throw Error("no input data: give --input FILE.h5 or --random SEED");
  const Extent procs = options.procs ? *options.procs : partition::procs_for_ranks(num_ranks);
  const partition::Plan planned = partition::make_plan(graph, procs, options.planner);
  const std::vector<partition::PartitionVector>& plan = planned.partitions;

  // Wall-clock phase timers (MPI_Wtime underneath).
  Teuchos::Time read_timer("einrel run: inputs"), eval_timer("einrel run: evaluation"),
      write_timer("einrel run: outputs");
  std::vector<std::optional<AnyTensor<Memory>>> values(graph.size());
  {
    Teuchos::TimeMonitor timing(read_timer);
    for (VertexId v = 0; v < graph.size(); ++v) {
      const Vertex& vertex = graph.vertex(v);
      if (!vertex.is_input()) continue;
      const io::HostData data = options.input
                                    ? io::read_dataset(*options.input, vertex.name, vertex.dtype, vertex.bound)
                                    : random_data(vertex, v, *options.random_seed);
      values[v] = to_device(vertex.name, vertex.bound, data);
    }
  }
  std::optional<Evaluation<Memory>> evaluated, reference;
  {
    Teuchos::TimeMonitor timing(eval_timer);
    evaluated = evaluate_partitioned(Exec{}, graph, values, plan);
  }
  if (options.check) reference = evaluate_unpartitioned(Exec{}, graph, std::move(values));
  const Evaluation<Memory>& result = *evaluated;

  RunReport report;
  report.graph = options.graph;
  report.ranks = num_ranks;
  report.computing_ranks = 1;
  report.backend = Exec::name();
  report.threads = Exec{}.concurrency();
  report.planner = planned.planner;
  report.predicted_cost = planned.total_cost;
  report.procs = procs;
  report.total_seconds = eval_timer.totalElapsedTime();
  report.input_seconds = read_timer.totalElapsedTime();
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    // One rank holds every block: nothing moves between ranks.
    report.vertices.push_back({vertex.name, vertex.einsum->equation(), vertex.bound, plan[v].str(), result.seconds[v],
                               result.kernel_seconds[v], 0});
  }
  if (reference) {
    report.check_error = 0.0;
    report.check_tolerance = check_tolerance(graph);
    for (VertexId v : graph.outputs())
      report.check_error = std::max(*report.check_error,
                                    relative_difference(to_host(*result.values[v]), to_host(*reference->values[v])));
    if (!(*report.check_error <= *report.check_tolerance))
      throw Error("check failed: the partitioned evaluation differs from the unpartitioned one by " +
                  std::to_string(*report.check_error) + " (relative), more than the tolerance " +
                  std::to_string(*report.check_tolerance));
  }

  // The report is staged first so that either every requested file appears or none does.
  std::optional<io::AtomicFile> report_file;
  if (options.report) {
    report_file.emplace(*options.report);
    report_file->write_text(report_json(report));
  }
  if (options.output) {
    Teuchos::TimeMonitor timing(write_timer);
    std::vector<io::NamedHostTensor> outputs;
    for (VertexId v : graph.outputs())
      outputs.push_back({graph.vertex(v).name, graph.vertex(v).bound, to_host(*result.values[v])});
    io::write_datasets(*options.output, outputs);
  }
  if (report_file) report_file->commit();
  print_summary(report, out);
  if (options.output)
    out << "wrote " << graph.outputs().size() << " output(s) to " << *options.output << " in " << std::fixed
        << write_timer.totalElapsedTime() << " s\n";
  if (options.report) out << "wrote report to " << *options.report << "\n";
}

// Makes rank 0's outcome everyone's: returns normally on every rank, or throws the same Error on every rank.
void share_outcome(MPI_Comm comm, std::string error) {
  int length = static_cast<int>(error.size());
  // The waiting ranks poll with a nap in between instead of blocking in MPI_Bcast: MPICH's blocking calls
  // spin, which would take a core from rank 0's threads and BLAS while it computes.
  MPI_Request request;
  MPI_Ibcast(&length, 1, MPI_INT, 0, comm, &request);
  for (int done = 0; !done;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  error.resize(length);
  if (length > 0) MPI_Bcast(error.data(), length, MPI_CHAR, 0, comm);
  if (length > 0) throw Error(error);
}

}  // namespace

void run_graph(MPI_Comm comm, const RunOptions& options, std::ostream& out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string error;
  if (rank == 0) {
    try {
      run_on_root(size, options, out);
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "unknown failure";
    }
  }
  share_outcome(comm, error);
}

}  // namespace einrel
