#include <einrel_AtomicFile.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_IterateCommand.hpp>
#include <einrel_Json.hpp>
#include <einrel_MeasuredShape.hpp>
#include <einrel_RunData.hpp>
#include <einrel_Wait.hpp>

#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <utility>

namespace einrel::cli {
namespace {

using comm::collectively;
using comm::Communicator;
using comm::complete;

// The 0-d dataset of a checkpoint that holds the steps done.
constexpr const char* step_dataset = "iterate_step";

// The carried pairs of options.carry in `graph`: each P an input, each P_next an EinSum vertex of P's bound and
// dtype, each P once. Throws Error naming the first that is not.
partition::Carried carried_pairs(const Graph& graph, const IterateOptions& options) {
  partition::Carried carried;
  for (const auto& [name, next_name] : options.carry) {
    const auto w = graph.find(name), next = graph.find(next_name);
    if (!w || !graph.vertex(*w).is_input())
      throw Error("--carry " + name + "=" + next_name + ": '" + name + "' is no input of the graph");
    if (!next || graph.vertex(*next).is_input())
      throw Error("--carry " + name + "=" + next_name + ": '" + next_name + "' is no einsum vertex of the graph");
    const Vertex &a = graph.vertex(*w), &b = graph.vertex(*next);
    if (a.bound != b.bound || a.dtype != b.dtype)
      throw Error("--carry " + name + "=" + next_name + ": '" + name + "' is " + std::string(dtype_name(a.dtype)) +
                  to_string(a.bound) + " but '" + next_name + "' is " + std::string(dtype_name(b.dtype)) +
                  to_string(b.bound));
    for (const auto& [u, unused] : carried)
      if (u == *w) throw Error("--carry names '" + name + "' twice");
    carried.emplace_back(*w, *next);
  }
  return carried;
}

// The graph file with every carried P_next and the --until vertex made outputs (an output is kept to the end
// of a step, so the next step and the test can read it).
Graph step_graph(const IterateOptions& options) {
  Graph graph = read_graph_file(options.run.graph);
  auto make_output = [&](VertexId v) {
    if (std::find(graph.outputs().begin(), graph.outputs().end(), v) == graph.outputs().end()) graph.output(v);
  };
  for (const auto& [w, next] : carried_pairs(graph, options)) make_output(next);
  if (options.until) {
    const auto v = graph.find(*options.until);
    if (!v || graph.vertex(*v).is_input() || !graph.vertex(*v).bound.empty())
      throw Error("--until " + *options.until + ": the convergence test needs a 0-d einsum vertex of the graph");
    make_output(*v);
  }
  return graph;
}

// Collective: the steps a checkpoint records as done (its 0-d dataset iterate_step), at most `steps`.
int steps_done(const Communicator& comm, const std::string& path, int steps) {
  double done = 0;
  io::InputFiles files(comm);
  files.read({path, std::string("/") + step_dataset}, Dtype::f64, {}, {io::HostBox{Box{{}, {}}, &done}});
  if (!(done >= 0) || done != std::floor(done) || done > steps)
    throw Error("checkpoint " + path + " records " + io::json_number(done) + " steps done; --steps is " +
                std::to_string(steps));
  return static_cast<int>(done);
}

// The carried values of a step graph whose shapes are re-derived each step (docs/sparse.md "Iterations"): each
// block-sparse P, measured on the tiles of its first shape (an even grid of as many blocks) after every step.
struct SparseCarry {
  std::string name;  // P
  BlockGrid tiles;
  std::vector<double> density;  // of P as each step reads it
  std::vector<Extent> dropped;  // tiles of P_next dropped after each step
};

std::string report_json(const IterateOptions& o, const engine::FittedPlan& fitted, int ranks, int first, bool converged,
                        const std::vector<double>& tested, const std::vector<double>& seconds,
                        const std::vector<double>& planning, const std::vector<Extent>& floats,
                        const std::vector<Extent>& screened, const std::vector<SparseCarry>& sparse) {
  const partition::Plan& plan = fitted.plan;
  io::JsonWriter j = io::json_report();
  j.member("command", "iterate").member("graph", o.run.graph).key("carry").begin_array();
  for (const auto& [w, next] : o.carry) j.begin_object().member("input", w).member("from", next).end_object();
  j.end_array().member("steps", o.steps).member("first_step", first + 1);
  j.member("steps_run", static_cast<int>(seconds.size())).member("until", o.until);
  j.member("tolerance", o.until ? std::optional<double>(o.tolerance) : std::nullopt).member("converged", converged);
  j.member("planner", plan.planner).member("procs", plan.procs).member("num_ranks", ranks);
  j.member("replanned_each_step", !sparse.empty());
  j.member("predicted_cost_per_step", plan.total_cost).member("estimated_seconds_per_step", fitted.estimated_seconds());
  j.member("proposed_by", fitted.proposed_by).member("until_values", tested).member("seconds_per_step", seconds);
  j.member("planning_seconds_per_step", planning).member("floats_moved_per_step", floats);
  j.member("screened_products_per_step", screened).key("carried_density_per_step").begin_object();
  for (const SparseCarry& c : sparse) j.member(c.name, c.density);
  j.end_object().key("dropped_tiles_per_step").begin_object();
  for (const SparseCarry& c : sparse) j.member(c.name, c.dropped);
  return j.end_object().end_object().str();
}

}  // namespace

void iterate_graph(MPI_Comm user_comm, const IterateOptions& options, std::ostream& out) {
  const Communicator comm(user_comm);
  Graph graph;
  partition::Carried carried;
  Sources sources;
  int first = 0;  // steps done before this run
  collectively(comm, [&] {
    graph = step_graph(options);
    carried = carried_pairs(graph, options);
    Sources restarted;  // a restart reads the carried values from its checkpoint, every other input as at the start
    if (options.restart)
      for (const auto& [w, next] : carried)
        restarted[graph.vertex(w).name] = {*options.restart, "/" + graph.vertex(w).name};
    sources = input_sources(graph, options.run, std::move(restarted));
  });
  if (options.restart) first = steps_done(comm, *options.restart, options.steps);
  bind_input_shapes(comm, graph, sources, options.run.random_seed, options.run.sparse);
  // A block-sparse carried value changes shape from step to step: each step is planned anew for the shapes
  // measured after the last one, and the values move into its layouts. Otherwise one plan serves every step.
  std::vector<SparseCarry> sparse;
  for (const auto& [w, next] : carried)
    if (graph.vertex(w).sparse)
      sparse.push_back(
          {graph.vertex(w).name, BlockGrid(graph.vertex(w).bound, graph.vertex(w).shape->grid().parts()), {}, {}});
  const bool replan = !sparse.empty();
  const double threshold = options.run.engine.screen;

  engine::PipelineOptions engine(options.run.engine);
  engine.failure = failure_injection();
  engine.input_reads = engine::InputReads::move;  // every input stays in memory across the steps
  io::InputFiles files(comm);
  open_input_files(files, graph, sources);
  auto session = std::make_unique<Session>(comm, graph, engine, replan ? partition::Carried{} : carried);
  if (!replan) session->prepare(Exec{});
  Values values = InputLoader(files, session->graph(), sources, options.run).load(*session);
  auto id = [&](const std::string& name) { return *session->graph().find(name); };
  // The sparse carried values on their tiles, dropped tiles gone; their shapes bound to `graph` for the next plan.
  auto measure = [&](bool after_step) {
    for (SparseCarry& c : sparse) {
      engine::MeasuredValue<Memory> m =
          engine::measure_shape(Exec{}, session->exchange(), *values[id(c.name)], c.tiles, threshold);
      values[id(c.name)] = std::move(m.value);
      graph.bind_shape(*graph.find(c.name), m.shape);
      if (after_step) c.dropped.push_back(m.dropped);
    }
  };
  if (replan) measure(false);

  std::vector<double> tested, seconds, planning;
  std::vector<Extent> floats, screened;
  std::optional<engine::EngineResult<Memory>> last;
  bool converged = false;
  // The carried values as the next step reads them, by name: the state a checkpoint keeps (sparse ones with masks).
  auto write_state = [&](const std::string& path, const std::vector<std::pair<std::string, double>>& scalars,
                         bool with_outputs) {
    std::vector<std::pair<std::string, VertexId>> written;
    Values all(session->graph().size());
    if (with_outputs) {
      written = outputs_by_name(session->graph());
      all = last->values;
    }
    std::vector<bool> masked(session->graph().size(), false);
    for (const auto& [name, next_name] : options.carry) {
      all[id(name)] = values[id(name)];
      written.emplace_back(name, id(name));
      masked[id(name)] = session->graph().vertex(id(name)).sparse;
    }
    collectively(comm, [&] { inject_at_write(session->options(), comm.rank(), written); });
    write_values(comm, session->graph(), all, written, path, masked, scalars);
  };
  for (int k = first; k < options.steps && !converged; ++k) {
    MPI_Request request;  // time each step from a common start
    complete(MPI_Ibarrier(comm.get(), &request), request, "MPI_Ibarrier");
    const double start = MPI_Wtime();
    last.reset();  // its blocks go back to the pool for this step
    if (replan) {  // plan for the measured shapes, then move every input into the plan's layouts
      std::map<std::string, engine::AnyDistributed<Memory>> inputs;
      for (VertexId v = 0; v < session->graph().size(); ++v)
        if (session->graph().vertex(v).is_input()) inputs.emplace(session->graph().vertex(v).name, *values[v]);
      session.reset();  // before the next one takes the pool's cache limit
      session = std::make_unique<Session>(comm, graph, engine);
      values.assign(session->graph().size(), std::nullopt);
      for (VertexId v = 0; v < session->graph().size(); ++v)
        if (session->graph().vertex(v).is_input())
          values[v] = engine::relayout(Exec{}, session->exchange(), inputs.at(session->graph().vertex(v).name),
                                       session->schedule().layout(v));
      for (SparseCarry& c : sparse) c.density.push_back(graph.vertex(*graph.find(c.name)).shape->density());
    }
    const double planned = MPI_Wtime() - start;
    last = session->execute(Exec{}, values);
    for (const auto& [name, next_name] : options.carry) values[id(name)] = last->values[id(next_name)];
    if (replan) measure(true);
    const double mine = MPI_Wtime() - start;
    double slowest[2] = {0, 0}, times[2] = {mine, planned};
    complete(MPI_Iallreduce(times, slowest, 2, MPI_DOUBLE, MPI_MAX, comm.get(), &request), request, "MPI_Iallreduce");
    Extent sent = last->traffic.floats_sent, total = 0;
    complete(MPI_Iallreduce(&sent, &total, 1, MPI_INT64_T, MPI_SUM, comm.get(), &request), request, "MPI_Iallreduce");
    seconds.push_back(slowest[0]);
    planning.push_back(slowest[1]);
    floats.push_back(total);
    screened.push_back(session->schedule().screened_products());
    if (options.until) {
      tested.push_back(scalar_value(comm, *last->values[id(*options.until)]));
      converged = std::abs(tested.back()) < options.tolerance;
    }
    const int done = k + 1;
    if (options.checkpoint && done % options.checkpoint_every == 0)
      write_state(*options.checkpoint, {{step_dataset, done}}, false);
  }
  if (!last)
    throw Error("nothing to run: the checkpoint records " + std::to_string(first) + " steps done of --steps " +
                std::to_string(options.steps));

  const bool root = comm.rank() == 0;
  std::optional<io::AtomicFile> report_file;
  collectively(comm, [&] {
    if (options.run.report && root) {
      report_file.emplace(*options.run.report);
      report_file->write_text(report_json(options, session->fitted(), comm.size(), first, converged, tested, seconds,
                                          planning, floats, screened, sparse));
    }
  });
  // The last step's outputs, then the carried values as a next step would read them.
  if (options.run.output) write_state(*options.run.output, {}, true);
  collectively(comm, [&] {
    if (report_file) report_file->commit();
  });
  if (!root) return;
  out << "einrel iterate: steps " << first + 1 << " to " << first + static_cast<int>(seconds.size()) << " of "
      << options.run.graph << " on " << comm.size() << " rank(s), p = " << session->plan().procs << ", planner "
      << session->plan().planner << (replan ? " (planned anew each step for the carried shapes)" : "") << "\n";
  for (std::size_t k = 0; k < seconds.size(); ++k) {
    out << "step " << first + static_cast<int>(k) + 1 << ": " << std::fixed << std::setprecision(6) << seconds[k]
        << " s, " << floats[k] << " floats moved" << std::defaultfloat;
    for (const SparseCarry& c : sparse) out << ", " << c.name << " density " << io::json_number(c.density[k]);
    if (options.until) out << ", " << *options.until << " = " << io::json_number(tested[k]);
    out << "\n";
  }
  if (options.until)
    out << (converged ? "converged: |" + *options.until + "| < " + io::json_number(options.tolerance)
                      : "not converged within " + std::to_string(options.steps) + " steps")
        << "\n";
  if (options.checkpoint) out << "checkpoint: " << *options.checkpoint << "\n";
  if (options.run.output) out << "wrote the outputs and carried values to " << *options.run.output << "\n";
  if (options.run.report) out << "wrote report to " << *options.run.report << "\n";
}

}  // namespace einrel::cli
