#include <einrel_Carried.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_Viable.hpp>

#include <limits>

namespace einrel::partition {
namespace {

// What the readers of w pay to read it from a producer cut into `parts` per dimension.
double readers_cost(const Graph& graph, const std::vector<PartitionVector>& partitions, VertexId w,
                    const std::vector<Extent>& parts, CostModel model) {
  double cost = 0;
  for (VertexId c = w + 1; c < graph.size(); ++c) {
    const Vertex& reader = graph.vertex(c);
    if (reader.is_input()) continue;
    for (std::size_t k = 0; k < reader.inputs.size(); ++k)
      if (reader.inputs[k] == w)
        cost += repartition_cost(graph.vertex(w).bound, parts, partitions[c].project(reader.einsum->inputs[k]), model);
  }
  return cost;
}

std::vector<Extent> output_parts(const Graph& graph, const std::vector<PartitionVector>& partitions, VertexId v) {
  return partitions[v].project(graph.vertex(v).einsum->output);
}

}  // namespace

double carried_cost(const Graph& graph, const std::vector<PartitionVector>& partitions, const Carried& carried,
                    CostModel model) {
  double cost = 0;
  for (const auto& [w, next] : carried)
    cost += readers_cost(graph, partitions, w, output_parts(graph, partitions, next), model);
  return cost;
}

void plan_carried(const Graph& graph, Plan& plan, const Carried& carried) {
  for (const auto& [w, next] : carried) {
    const ResolvedEinSum& e = graph.resolved(next);
    const Vertex& vertex = graph.vertex(next);
    double best = std::numeric_limits<double>::infinity();
    PartitionVector chosen = plan.partitions[next];
    for (const PartitionVector& d : viable(e, plan.procs)) {
      plan.partitions[next] = d;  // tried in place; `chosen` is put back below
      double cost = join_cost(e, d) + aggregation_cost(e, d);
      for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
        if (vertex.inputs[k] != w) cost += edge_cost(graph, plan.partitions, next, k, plan.cost_model);
      // W itself lies in d's output cut: reading it costs what the other readers pay.
      cost += readers_cost(graph, plan.partitions, w, d.project(vertex.einsum->output), plan.cost_model);
      if (cost < best) best = cost, chosen = d;
    }
    plan.partitions[next] = chosen;
  }
  cost_plan(graph, plan);
}

}  // namespace einrel::partition
