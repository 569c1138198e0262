#ifndef EINREL_COSTMODEL_HPP
#define EINREL_COSTMODEL_HPP

#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>

#include <string>
#include <vector>

// The cost models of the planners, in floats moved between join sites (docs/planner.md "Cost models").
// Block sizes use real division b/d (the average block when d does not divide b; docs/planner.md explains why).
namespace einrel::partition {

// paper: eindecomp.txt §7 with the corrections in docs/planner.md, an upper bound: every operand copy a join tuple
//   reads is shipped to it, and a repartition is charged the paper's bound.
// engine (the default): the floats delivered to the join sites of einrel's engine, each of the p join tuples
//   on its own rank (docs/engine.md), beyond the one copy every value already has: a value's blocks stay where
//   they were produced (an input's where its first reader's tuples run), so the copies of an operand beyond
//   one and the parts of a block that fall outside the block its own site reads are what moves. For
//   intermediates that is the engine's network traffic; for inputs, the extra copies are read again from the
//   file (or generated) rather than sent, and are charged the same so that replicating inputs is not free.
//   Exact when every producer block sits at a site that reads it (the engine's tuple order gives that to the
//   first reader that keeps the partition, docs/engine.md), otherwise a lower bound.
enum class CostModel { engine, paper };

// "engine", "paper", in that order.
std::vector<std::string> cost_model_names();
std::string cost_model_name(CostModel model);
// Throws Error naming the choices for an unknown name.
CostModel parse_cost_model(const std::string& name);

// The join and aggregation costs of one EinSum vertex for any number of partition vectors: the label layout
// is resolved once, so costing a vector allocates nothing. `parts` holds one entry per unique label, in
// EinSum::unique_labels() order (the order of viable()).
class EinSumCost {
 public:
  explicit EinSumCost(const ResolvedEinSum& e, CostModel model = CostModel::paper);

  // paper: J · (n_X + n_Y), J the number of join results (J · n_X for a unary EinSum).
  // engine: Σ_X (J · n_X − N_X) = Σ_X N_X · (Π_{l ∉ l_X} d_l − 1), the copies of each operand beyond one.
  double join(const std::vector<Extent>& parts) const;
  // cost_agg: (J / n_agg) · (n_agg − 1) · n_Z, n_agg the product of the parts of the aggregated labels (both
  // models: the engine sends each partial but the owner's to the owner of its output block).
  double aggregation(const std::vector<Extent>& parts) const;

 private:
  struct Tensor {
    Bound bound;
    std::vector<std::size_t> labels;  // per dimension: the position of its label among the unique labels
    double block(const std::vector<Extent>& parts) const;  // n_X = Π b / d, the floats of one block
    double size() const;                                   // N_X = Π b
  };
  CostModel model_;
  std::vector<Tensor> operands_;
  Tensor output_;
  std::vector<std::size_t> aggregated_;
};

// The paper's EinSumCost for one vector d (any label order).
double join_cost(const ResolvedEinSum& e, const PartitionVector& d);
double aggregation_cost(const ResolvedEinSum& e, const PartitionVector& d);

// cost_repart of one tensor of bound b produced with parts `producer` and consumed with parts `consumer`
// (per dimension). paper: (n_c/n_int − 1)(n/n_c)(n_c + n_p) + [n_p ≠ n_int] n_p n/n_c. engine:
// n · (1 − n_int/n_p), the part of each producer block outside the consumer block read at its site (the
// consumer's further copies are in its join term).
double repartition_cost(const Bound& b, const std::vector<Extent>& producer, const std::vector<Extent>& consumer,
                        CostModel model = CostModel::paper);

// What one EinSum vertex costs under a plan; `repartition` sums its operands' repartitions (an edge's
// repartition is charged to its consumer).
struct VertexCost {
  double join = 0, agg = 0, repartition = 0;
  double total() const { return join + agg + repartition; }
};

// The repartition of operand `operand` of EinSum vertex v: zero for a graph input (inputs are placed as
// their consumers need them, eindecomp.txt §8.2), else from its producer's d[l_Z] to v's d[l_operand].
// `partitions` holds one vector per vertex (empty for inputs).
double edge_cost(const Graph& graph, const std::vector<PartitionVector>& partitions, VertexId v, std::size_t operand,
                 CostModel model);

// The cost of every vertex under `partitions` (zero for inputs). Throws Error when a vector does not fit
// its vertex (PartitionVector::check_fits). Every planner's plan is costed by this one function.
std::vector<VertexCost> evaluate_cost(const Graph& graph, const std::vector<PartitionVector>& partitions,
                                      CostModel model);

}  // namespace einrel::partition

#endif
