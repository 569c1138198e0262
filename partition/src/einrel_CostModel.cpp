#include <einrel_CostModel.hpp>
#include <einrel_Error.hpp>

#include <algorithm>

namespace einrel::partition {
namespace {

double product(const std::vector<Extent>& parts) {
  double n = 1;
  for (Extent k : parts) n *= static_cast<double>(k);
  return n;
}

}  // namespace

std::vector<std::string> cost_model_names() { return {"engine", "paper"}; }  // in CostModel's order

std::string cost_model_name(CostModel model) { return cost_model_names()[static_cast<std::size_t>(model)]; }

CostModel parse_cost_model(const std::string& name) {
  const std::vector<std::string> names = cost_model_names();
  std::string choices;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (name == names[k]) return static_cast<CostModel>(k);
    choices += (k ? ", " : "") + names[k];
  }
  throw Error("unknown cost model '" + name + "' (available: " + choices + ")");
}

double EinSumCost::Tensor::size() const {
  double n = 1;
  for (Extent b : bound) n *= static_cast<double>(b);
  return n;
}

double EinSumCost::Tensor::block(const std::vector<Extent>& parts) const {
  double n = 1;
  for (std::size_t k = 0; k < bound.size(); ++k)
    n *= static_cast<double>(bound[k]) / static_cast<double>(parts[labels[k]]);
  return n;
}

EinSumCost::EinSumCost(const ResolvedEinSum& e, CostModel model) : model_(model) {
  for (std::size_t k = 0; k < e.arity(); ++k)
    operands_.push_back({e.operand_bounds()[k], e.positions(e.einsum().inputs[k])});
  output_ = {e.output_bound(), e.positions(e.einsum().output)};
  aggregated_ = e.positions(e.aggregated_labels());
}

double EinSumCost::join(const std::vector<Extent>& parts) const {
  const double J = product(parts);
  double cost = 0;
  for (const Tensor& x : operands_) cost += J * x.block(parts) - (model_ == CostModel::engine ? x.size() : 0.0);
  return cost;
}

double EinSumCost::aggregation(const std::vector<Extent>& parts) const {
  double n_agg = 1;
  for (std::size_t k : aggregated_) n_agg *= static_cast<double>(parts[k]);
  return product(parts) / n_agg * (n_agg - 1) * output_.block(parts);
}

double join_cost(const ResolvedEinSum& e, const PartitionVector& d) {
  return EinSumCost(e).join(d.project(e.unique_labels()));
}

double aggregation_cost(const ResolvedEinSum& e, const PartitionVector& d) {
  return EinSumCost(e).aggregation(d.project(e.unique_labels()));
}

double repartition_cost(const Bound& b, const std::vector<Extent>& producer, const std::vector<Extent>& consumer,
                        CostModel model) {
  double n_p = 1, n_c = 1, n_int = 1, n = 1;
  bool whole_producer_blocks = true;  // n_p == n_int: each producer block lies inside one consumer block
  for (std::size_t k = 0; k < b.size(); ++k) {
    const double extent = static_cast<double>(b[k]);
    const double p = extent / static_cast<double>(producer[k]), c = extent / static_cast<double>(consumer[k]);
    n_p *= p;
    n_c *= c;
    n_int *= std::min(p, c);
    n *= extent;
    whole_producer_blocks = whole_producer_blocks && producer[k] >= consumer[k];
  }
  if (model == CostModel::engine) return std::max(0.0, n * (1 - n_int / n_p));
  return (n_c / n_int - 1) * (n / n_c) * (n_c + n_p) + (whole_producer_blocks ? 0.0 : n_p * n / n_c);
}

double edge_cost(const Graph& graph, const std::vector<PartitionVector>& partitions, VertexId v, std::size_t operand,
                 CostModel model) {
  const Vertex& consumer = graph.vertex(v);
  const VertexId u = consumer.inputs.at(operand);
  const Vertex& producer = graph.vertex(u);
  if (producer.is_input()) return 0;
  return repartition_cost(producer.bound, partitions.at(u).project(producer.einsum->output),
                          partitions.at(v).project(consumer.einsum->inputs[operand]), model);
}

std::vector<VertexCost> evaluate_cost(const Graph& graph, const std::vector<PartitionVector>& partitions,
                                      CostModel model) {
  if (partitions.size() != graph.size())
    throw Error("a plan needs one partition vector per vertex: the graph has " + std::to_string(graph.size()) +
                " vertices, the plan " + std::to_string(partitions.size()));
  std::vector<VertexCost> costs(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const ResolvedEinSum& e = graph.resolved(v);
    const PartitionVector& d = partitions[v];
    d.check_fits(e);
    const EinSumCost cost(e, model);
    const std::vector<Extent> parts = d.project(e.unique_labels());
    costs[v].join = cost.join(parts);
    costs[v].agg = cost.aggregation(parts);
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
      costs[v].repartition += edge_cost(graph, partitions, v, k, model);
  }
  return costs;
}

}  // namespace einrel::partition
