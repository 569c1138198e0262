#include <einrel_GraphBuilders.hpp>
#include <einrel_MatrixChainCommand.hpp>

#include <iomanip>
#include <ostream>

namespace einrel::cli {

double graph_flops(const Graph& graph) {
  double flops = 0;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const ResolvedEinSum& e = graph.resolved(v);
    double all = 1, out = 1;
    for (char c : e.unique_labels()) all *= static_cast<double>(e.extent(c));
    for (Extent x : vertex.bound) out *= static_cast<double>(x);
    flops += all + (all - out);
  }
  return flops;
}

void run_matrix_chain(MPI_Comm comm, const MatrixChainOptions& options, std::ostream& out) {
  Graph g;
  g.output(builders::matrix_chain_program(g, options.scale, options.skewed, options.dtype));
  const double flops = graph_flops(g);
  const io::RunReport report = run_built_graph(comm, std::move(g), options.run, out);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  out << "matrix-chain: " << (options.skewed ? "skewed" : "square") << " S = " << options.scale << " "
      << dtype_name(options.dtype) << " on " << report.num_ranks << " rank(s), " << report.planner
      << " plan for p = " << report.procs << ": " << std::fixed << std::setprecision(3) << report.compute_seconds()
      << " s, " << std::setprecision(1) << flops / report.compute_seconds() * 1e-9 << " GFLOP/s, floats moved "
      << report.floats_moved() << " (predicted " << std::setprecision(0)
      << (report.predicted_cost ? *report.predicted_cost : 0.0) << ")\n";
}

}  // namespace einrel::cli
