#include <einrel_Error.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_PlanCommand.hpp>
#include <einrel_PlanExport.hpp>
#include <einrel_RunData.hpp>
#include <einrel_RunSummary.hpp>

#include <algorithm>
#include <sstream>

namespace einrel::cli {

void plan_graph(MPI_Comm comm, const PlanOptions& options, std::ostream& out) {
  if (options.format != "text" && options.format != "json" && options.format != "dot")
    throw Error("unknown --format '" + options.format + "' (available: text, json, dot)");
  if (options.ranks && options.format == "dot") throw Error("--ranks adds a dry run to text or json plans, not dot");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Graph graph = read_graph_file(options.graph);
  if (std::any_of(graph.vertices().begin(), graph.vertices().end(), [](const Vertex& v) { return v.sparse; })) {
    Sources sources;
    for (const Vertex& v : graph.vertices())
      if (v.sparse && options.input) sources[v.name] = io::DatasetSource{*options.input, "/" + v.name};
    const comm::Communicator world(comm);
    comm::collectively(world, [&] {
      for (const Vertex& v : graph.vertices())
        if (v.sparse && !options.input && !options.random_seed)
          throw Error("sparse input '" + v.name + "' needs a shape to plan by: give --input FILE (its mask or norms " +
                      "dataset) or --random SEED --random-density D (docs/sparse.md)");
    });
    bind_input_shapes(world, graph, sources, options.random_seed, options.sparse);
  }
  // The plan is costed by its dry run on R ranks: --ranks, else p when --procs gives it, else this launch's.
  int ranks = size;
  if (options.ranks)
    ranks = *options.ranks;
  else if (options.engine.procs && *options.engine.procs <= max_planned_ranks)
    ranks = static_cast<int>(*options.engine.procs);
  const engine::FittedPlan fitted = engine::choose_plan(graph, ranks, options.engine);
  std::optional<engine::Traffic> dry;
  if (options.ranks) dry = fitted.dry_run;  // on *options.ranks, the R the plan was costed on
  const std::size_t estimated =
      dry ? *std::max_element(dry->peak_memory_bytes.begin(), dry->peak_memory_bytes.end()) : 0;
  if (rank != 0) return;
  // The node map the dry run priced messages by (docs/planner.md "Nodes"); 0: one level.
  const int priced_nodes = options.engine.machine.two_level() ? options.engine.machine.ranks_per_node : 0;
  if (options.format == "dot") {
    out << plan_dot(fitted.graph(graph), fitted);
  } else if (options.format == "json") {
    io::JsonWriter j = io::json_report();
    write_plan(j, fitted.graph(graph), fitted);
    if (dry) {
      j.member("num_ranks", *options.ranks).member("ranks_per_node", priced_nodes);
      j.member("floats_moved", dry->total_floats_moved()).key("ranks");
      io::write_ranks(j, dry->ranks, {}, dry->peak_memory_bytes);
    }
    out << j.end_object().str();
  } else {
    out << plan_text(fitted.graph(graph), fitted);
    if (dry) {
      std::ostringstream s;
      s << "dry run on " << *options.ranks << " ranks";
      if (priced_nodes > 0) s << " (nodes of " << priced_nodes << ": messages within one at the node's rates)";
      s << ": " << dry->total_floats_moved() << " floats moved between ranks\n";
      print_rank_table(dry->ranks, s);
      s << "  estimated peak allocated bytes (blocks, kernel temporaries, exchange buffers): " << estimated
        << " on the busiest rank\n";
      out << s.str();
    }
  }
}

}  // namespace einrel::cli
