#ifndef EINREL_PLANSEARCH_HPP
#define EINREL_PLANSEARCH_HPP

#include <einrel_CostModel.hpp>
#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>
#include <einrel_VertexMemory.hpp>

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

// The machinery shared by the planners that search viable partition vectors: the EinDecomp dynamic program
// (eindecomp.txt §8.2–8.4) and the greedy baseline. Partitions are compared by index into per-vertex lists
// of distinct partitions, and each edge's repartition costs are computed once per pair and kept.
namespace einrel::partition::search {

// viable(v, p) of one EinSum vertex with each candidate's join + aggregation cost, its output partition
// d[l_Z] and its operand partitions d[l_in], the latter two as indices into lists of distinct partitions.
struct Candidates {
  std::vector<PartitionVector> d;
  std::vector<double> local;                               // join + aggregation of each candidate
  std::vector<std::vector<Extent>> outputs;                // distinct d[l_Z], in order of first appearance
  std::vector<int> output_of;                              // per candidate: index into outputs
  std::vector<std::vector<std::vector<Extent>>> operands;  // per operand: distinct d[l_operand]
  std::vector<std::vector<int>> operand_of;                // per operand, per candidate: index into operands[k]
};

Candidates candidates(const Graph& graph, VertexId v, Extent p, CostModel model);

// The repartition costs of one edge, from each distinct output partition of the producer to each distinct
// partition the consumer may require of that operand, computed on first use.
class EdgeCosts {
 public:
  EdgeCosts(const Bound& bound, const std::vector<std::vector<Extent>>& produced,
            const std::vector<std::vector<Extent>>& required, CostModel model);
  double operator()(int produced, int required) const;
  int num_required() const { return static_cast<int>(required_->size()); }

 private:
  Bound bound_;
  CostModel model_;
  const std::vector<std::vector<Extent>>* produced_;
  const std::vector<std::vector<Extent>>* required_;
  mutable std::vector<double> cost_;  // NaN until computed
};

// M[v, ·] of eindecomp.txt §8.2 for one vertex: per distinct output partition, the least cost of the
// subproblem that ends with that output partition and the candidate reaching it; per candidate and operand,
// which output partition of a table-sourced producer it takes (for back-tracking; -1 for other operands).
struct Table {
  std::vector<double> cost;  // per output partition; infinity when unreachable
  std::vector<int> best;     // per output partition: the first candidate reaching `cost`
  // Per output partition: the largest bytes a rank holds at any vertex of the subproblem (VertexMemory); 0
  // without a memory budget.
  std::vector<double> peak;
  std::vector<int> producer_output;  // [candidate * arity + operand]

  // The output partition of least cost (the first on ties).
  int argmin() const;
};

// Where the partition of one operand comes from in a step.
struct Source {
  const EdgeCosts* costs = nullptr;  // the edge's repartition costs (with table or fixed)
  const Table* table = nullptr;      // the producer's table: its entries are still open
  int fixed = -1;                    // else the producer's chosen output partition, if any
  // neither table nor fixed: the operand is free (a graph input, or an edge the step leaves out)
};

// A consumer already planned: the edge's costs and the partition it requires of v's output.
struct FixedConsumer {
  const EdgeCosts* costs;
  int required;
};

// Under a memory budget, the bytes a rank holds while v runs with each candidate (vertex_bytes + resident_bytes),
// the budget, and what the exchange buffers of one float moved take on a rank (its share of the floats, sent and
// received): a candidate with the floats it moves (join, aggregation, repartitions of its operands) is left out
// of the step where that exceeds the budget.
struct Room {
  const std::vector<double>* memory = nullptr;
  double budget = 0;
  double exchange_bytes_per_float = 0;
};

// One step: M[v, dZ] = min over candidates d with d[l_Z] = dZ of
//   join + agg + Σ_operands min_{producer entry e} (M[producer, e] + repart(e → d[l_operand]))
//   + Σ_{fixed consumers} repart(dZ → the partition it requires),
// with fixed operands costing repart(fixed → d[l_operand]) and free ones nothing. Operands fed by the same
// table share its entry. Entries of a producer that cannot beat its best entry plus that entry's largest
// repartition into v are pruned before the minimization (exact: repartitions are >= 0). With a `room`, each
// entry carries its subproblem's peak (the largest of its candidate's memory and the peaks of the producer
// entries it takes); a candidate takes the cheapest producer entry whose repartition still fits the budget
// (for two producers' tables, the first's choice leaves the second less room), candidates for which none does
// are left out, and of entries of equal cost the smaller peak wins.
Table step(const Candidates& cand, const std::vector<Source>& sources, const std::vector<FixedConsumer>& consumers,
           const Room& room = {});

// A plan under construction: the candidates of every EinSum vertex and which one each planned vertex has.
// Vertices are planned by the dynamic program, along paths or over a whole tree-shaped graph.
class Search {
 public:
  // With a `budget`, every step leaves out candidates whose vertex would hold more than the budget's bytes on the
  // busiest rank (VertexMemory), so every plan it makes fits the model's budget; fits() says whether one can.
  Search(const Graph& graph, Extent p, CostModel model, const MemoryBudget* budget = nullptr);
  Search(const Search&) = delete;  // edge costs point into the candidates
  Search& operator=(const Search&) = delete;

  const Graph& graph() const { return graph_; }
  bool planned(VertexId v) const { return choice_[v] >= 0; }
  // Candidate partition vectors costed so far.
  std::size_t considered() const { return considered_; }
  // Whether every vertex has a candidate within the budget and no search since the last optimize_greedily failed
  // to fit one (always, without a budget).
  bool fits() const;
  // The largest bytes a rank holds at any planned vertex by the memory model (0 without a budget).
  double peak_bytes() const;
  // Whether the plan so far is within the budget (always, without one).
  bool within_budget() const { return memory_.empty() || peak_bytes() <= budget_; }

  // The dynamic program along `path` (consecutive vertices: each an operand of the next), every planned
  // vertex fixed; operands and consumers off the path that are not planned cost nothing. Back-tracking from
  // the best entry of the last vertex plans the path (eindecomp.txt §8.3–8.4). False, the path left as it was,
  // where no plan of it fits the budget.
  bool optimize_path(const std::vector<VertexId>& path);
  // The dynamic program over every vertex in topological order with nothing planned, back-tracked from
  // every sink: optimal when no EinSum vertex feeds two operands (eindecomp.txt §8.2).
  void optimize_tree();
  // Unplans everything, then plans each vertex alone in topological order (a one-vertex path): its cheapest
  // candidate given its producers, its consumers not planned yet.
  void optimize_greedily();

  // What the vertices of `block` (all planned) cost with the rest fixed: join + agg and every repartition
  // into or out of them, each edge once. `in_block` flags the block's vertices.
  double block_cost(const std::vector<VertexId>& block, const std::vector<bool>& in_block) const;
  // Σ over planned vertices of join + agg + repartitions from planned producers.
  double total_cost() const;

  // The plan as partition vectors (empty for inputs and unplanned vertices).
  std::vector<PartitionVector> partitions() const;
  // Plans every EinSum vertex with its vector in `plan`; throws Error unless each is one of its candidates.
  void set_partitions(const std::vector<PartitionVector>& plan);
  // Candidate indices (-1: unplanned), to save and restore a plan.
  const std::vector<int>& choices() const { return choice_; }
  void set_choices(std::vector<int> choices) { choice_ = std::move(choices); }
  void unplan(VertexId v) { choice_[v] = -1; }

 private:
  using Edge = std::pair<VertexId, std::size_t>;  // (consumer, operand position)

  int output_of(VertexId v) const { return cand_[v]->output_of[choice_[v]]; }
  int operand_of(VertexId v, std::size_t k) const { return cand_[v]->operand_of[k][choice_[v]]; }
  // The repartition of operand k of planned vertex v from its planned producer (0 for inputs).
  double edge_cost(VertexId v, std::size_t k) const;
  void run_step(VertexId v, VertexId table_producer);
  // Under a budget: the bytes of exchange buffers per float v moves (Room).
  double exchange_bytes_per_float(VertexId v) const;
  void back_track(VertexId v, int output);

  const Graph& graph_;
  // Vertices of one EinSum on equal operand bounds (a chain's products) share their candidates, and edges
  // between equal candidate sets share their repartition costs: each is enumerated and costed once.
  std::deque<Candidates> distinct_candidates_;
  std::deque<EdgeCosts> distinct_edges_;
  std::vector<const Candidates*> cand_;               // per vertex; none for inputs
  std::vector<std::vector<const EdgeCosts*>> edges_;  // per vertex and operand; none for inputs
  std::vector<std::vector<Edge>> consumers_;
  std::vector<Table> tables_;
  std::vector<std::vector<double>> memory_;  // per vertex and candidate, under a budget
  double budget_ = 0;
  Extent ranks_ = 1;
  bool failed_ = false;  // some search found no plan within the budget
  std::vector<int> choice_;
  std::size_t considered_ = 0;
};

}  // namespace einrel::partition::search

#endif
