#include <einrel_Error.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_PlanCommand.hpp>
#include <einrel_PlanExport.hpp>

namespace einrel {

void plan_graph(MPI_Comm comm, const PlanOptions& options, std::ostream& out) {
  using Printer = std::string (*)(const Graph&, const partition::Plan&);
  Printer print = nullptr;
  if (options.format == "text") print = partition::plan_text;
  if (options.format == "json") print = partition::plan_json;
  if (options.format == "dot") print = partition::plan_dot;
  if (!print) throw Error("unknown --format '" + options.format + "' (available: text, json, dot)");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Graph graph = read_graph_file(options.graph);
  const Extent procs = options.procs ? *options.procs : partition::procs_for_ranks(size);
  const partition::Plan plan = partition::make_plan(graph, procs, options.planner);
  if (rank == 0) out << print(graph, plan);
}

}  // namespace einrel
