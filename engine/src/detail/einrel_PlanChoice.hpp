#ifndef EINREL_PLANCHOICE_HPP
#define EINREL_PLANCHOICE_HPP

#include <einrel_Carried.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_Graph.hpp>
#include <einrel_Options.hpp>
#include <einrel_Planner.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Slicing.hpp>
#include <einrel_Traffic.hpp>
#include <einrel_Transition.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace einrel::engine {

// The plan that runs, as chosen for the ranks it will run on: its partitions and costs, which planner
// proposed them, the schedule it was costed on (its transitions chosen; made once, the one the pipeline
// runs) and that schedule's dry run on every rank.
struct FittedPlan {
  partition::Plan plan;
  // The planner whose partitions won: eindecomp's own, "eindecomp (paper model)" or a baseline's, with the
  // p and the cut along block shapes where those differ from the request.
  std::string proposed_by;
  // Whether plan.total_cost and plan.costs are the dry run's floats moved (engine cost model, not the
  // `model` objective).
  bool costed_by_dry_run = false;
  // Why plan.procs differs from the ranks it runs on (empty where they are equal), for `plan` and `run`.
  std::string procs_reason;
  Schedule schedule;
  Traffic dry_run;
  // Where no partition fits the memory limit and a label is sliced (docs/planner.md "Slicing"): the sliced
  // graph, which the plan, the schedule and the dry run are for and which runs; null otherwise.
  std::shared_ptr<const SlicedGraph> sliced;
  // Where an n-ary einsum is split in another of its orders than the graph's, or an explicit chain of binary
  // contractions is computed as one n-ary einsum (docs/planner.md "Contraction order"): that graph, the one
  // sliced where `sliced` is set; null otherwise.
  std::shared_ptr<const Graph> reordered;
  double estimated_seconds() const { return dry_run.estimated_seconds(); }
  // The graph the plan is for: the sliced graph, else the reordered one, else `requested`, the one
  // choose_plan was given. Its inputs and outputs are the requested graph's, by name.
  const Graph& graph(const Graph& requested) const {
    return sliced ? sliced->graph : reordered ? *reordered : requested;
  }
  bool rewrites_graph() const { return sliced || reordered; }
};

// The plan to run on `ranks` ranks, as `options` ask (procs, planner, cost_model, transitions,
// memory_limit, comm_buffer_limit); with `carried` pairs (a step graph run again and again), each plan's
// carried vertices re-chosen by partition::plan_carried and its schedule keeping them where they are read.
// Without a memory limit: make_plan as requested (eindecomp: its choice among candidates, docs/planner.md). With
// `memory_limit` (bytes per rank, as the run report's peak_allocated_bytes counts them, estimated by the dry run, the
// one estimator: Traffic::peak_memory_bytes): the requested plan if its busiest rank fits; else, with automatic
// transitions, the same plan with point-to-point only, then with collectives wherever they apply; else, of
// every planner's plan at p, 2p and 4p (each under those policies) and those plans with a label sliced across
// a producer and its readers (FittedPlan::sliced), the one of least predicted cost that fits (ties: that order,
// requested planner first); where none fits, finer p (docs/planner.md "Memory limit", "Slicing"). Throws Error
// when none fits, naming the plan that comes closest, its rank and vertex, and the bytes missing.
// Under the makespan objective (and Options::plan_order), each n-ary einsum of up to alternative_operands
// operands is also tried in its other orders (contraction_orders), one einsum after another, and then the graph
// with its explicit chains of binary contractions merged into n-ary einsums (merge_contraction_chains) in each of
// their orders, each planned as above: an order replaces the graph's where its plan is estimated at least 5 %
// faster (FittedPlan::reordered), so the order is chosen with the partitions (einrel_OrderSearch.cpp). Without a
// memory limit, only chains with an order of fewer flops than the one written are merged
// (ChainMerge::cheaper_by_flops): the others would be planned again to no gain.
FittedPlan choose_plan(const Graph& graph, int ranks, const Options& options, const partition::Carried& carried = {});

// The plan of `graph` in the order its n-ary einsums were split: choose_plan without the orders' search.
FittedPlan plan_in_graph_order(const Graph& graph, int ranks, const Options& options,
                               const partition::Carried& carried);

}  // namespace einrel::engine

#endif
