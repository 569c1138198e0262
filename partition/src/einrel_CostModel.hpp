#ifndef EINREL_COSTMODEL_HPP
#define EINREL_COSTMODEL_HPP

#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>

#include <vector>

// The cost model of eindecomp.txt §7 with DESIGN.md §5's corrections: an upper bound, in floats, on the data
// moved to run a partitioned EinGraph. Block sizes use real division b/d (the average block when d does not
// divide b; docs/planner.md explains why).
namespace einrel::partition {

// The join and aggregation costs of one EinSum for any number of partition vectors: the label layout is
// resolved once, so costing a vector allocates nothing. `parts` holds one entry per unique label, in
// EinSum::unique_labels() order (the order of viable()).
class EinSumCost {
 public:
  explicit EinSumCost(const ResolvedEinSum& e);

  // cost_join: J · (n_X + n_Y), J the number of join results (J · n_X for a unary EinSum).
  double join(const std::vector<Extent>& parts) const;
  // cost_agg: (J / n_agg) · (n_agg − 1) · n_Z, n_agg the product of the parts of the aggregated labels.
  double aggregation(const std::vector<Extent>& parts) const;

 private:
  struct Tensor {
    Bound bound;
    std::vector<std::size_t> labels;  // per dimension: the position of its label among the unique labels
    double block(const std::vector<Extent>& parts) const;  // n_X = Π b / d, the floats of one block
  };
  std::vector<Tensor> operands_;
  Tensor output_;
  std::vector<std::size_t> aggregated_;
};

// EinSumCost for one vector d (any label order).
double join_cost(const ResolvedEinSum& e, const PartitionVector& d);
double aggregation_cost(const ResolvedEinSum& e, const PartitionVector& d);

// cost_repart of one tensor of bound b produced with parts `producer` and consumed with parts `consumer`
// (per dimension): (n_c/n_int − 1)(n/n_c)(n_c + n_p) + [n_p ≠ n_int] n_p n/n_c.
double repartition_cost(const Bound& b, const std::vector<Extent>& producer, const std::vector<Extent>& consumer);

// What one EinSum vertex costs under a plan; `repartition` sums its operands' repartitions (an edge's
// repartition is charged to its consumer).
struct VertexCost {
  double join = 0, agg = 0, repartition = 0;
  double total() const { return join + agg + repartition; }
};

// The repartition of operand `operand` of EinSum vertex v: zero for a graph input (inputs are placed as
// their consumers need them, eindecomp.txt §8.2), else from its producer's d[l_Z] to v's d[l_operand].
// `partitions` holds one vector per vertex (empty for inputs).
double edge_cost(const Graph& graph, const std::vector<PartitionVector>& partitions, VertexId v, std::size_t operand);

// The cost of every vertex under `partitions` (zero for inputs). Throws Error when a vector does not fit
// its vertex (PartitionVector::check_fits). Every planner's plan is costed by this one function.
std::vector<VertexCost> evaluate_cost(const Graph& graph, const std::vector<PartitionVector>& partitions);

}  // namespace einrel::partition

#endif
