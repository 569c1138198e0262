#include <einrel_DryRun.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_Error.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_ScheduleMemo.hpp>
#include <einrel_ShapeAligned.hpp>
#include <einrel_SlicedPartitions.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace einrel::engine {

namespace {

// How much faster a plan with halved shape blocks must be estimated than every other to win, and the most
// tuples the busiest rank of the fastest other plan runs for such a plan to be weighed (eindecomp).
constexpr double halved_margin = 0.06;
constexpr Extent halving_tuples = 32;

// Whether objective value a beats b by more than 0.01 %, below what the model can tell apart (a kernel call's
// own cost, call_seconds, is such a difference between plans whose calls do the same work): a tie keeps the
// earlier candidate, or goes to the smaller peak.
bool better(double a, double b) { return a < b - 1e-4 * std::abs(b); }

// Plans and their dry runs on `ranks` ranks under the options' transitions, input reads and machine.
class PlanCosting {
 public:
  PlanCosting(const Graph& graph, int ranks, const Options& options, const partition::Carried& carried)
      : graph_(graph),
        ranks_(ranks),
        options_(options),
        carried_(carried),
        streamed_(streamed_inputs(graph, options.input_reads, carried)),
        call_costs_(graph, options.scheduling_model()),
        memo_(graph, ranks, options.scheduling_model()) {}

  partition::Plan make(Extent p, const std::string& planner, partition::CostModel model) const {
    partition::Plan plan = partition::make_plan(graph_, p, planner, model);
    if (!carried_.empty()) partition::plan_carried(graph_, plan, carried_);
    return plan;
  }
  // EinDecomp's memory-constrained search at p (partition::eindecomp_within) for `budget` bytes per rank by its
  // memory model; nothing when it finds no plan within it.
  std::optional<partition::Plan> make_within(Extent p, double budget) const {
    std::optional<partition::Partitioning> chosen =
        partition::eindecomp_within(graph_, p, options_.cost_model, memory_budget(budget));
    if (!chosen) return std::nullopt;
    partition::Plan plan{"eindecomp", options_.cost_model,          p, std::move(chosen->partitions), {},
                         0,           chosen->partitions_considered};
    partition::cost_plan(graph_, plan);
    if (!carried_.empty()) partition::plan_carried(graph_, plan, carried_);
    return plan;
  }
  // The peak of `plan` by that search's memory model; nothing for vectors not the search's (cut along shapes).
  std::optional<double> model_peak(const partition::Plan& plan) const {
    try {
      return partition::memory_model_peak(graph_, plan.partitions, plan.procs, options_.cost_model, memory_budget(0));
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  // The schedule of `partitions` of `graph` on the ranks under `policy`, the options' input reads and machine.
  Schedule schedule(const Graph& graph, const std::vector<partition::PartitionVector>& partitions,
                    TransitionPolicy policy) const {
    return Schedule(graph, partitions, ranks_, policy, options_.scheduling_model(), carried_, options_.input_reads,
                    options_.screen, &graph == &graph_ ? &memo_ : nullptr);
  }
  // The plan's schedule on the ranks under `policy`, and its dry run; of `sliced`'s graph where given.
  FittedPlan cost(partition::Plan plan, TransitionPolicy policy, std::shared_ptr<const SlicedGraph> sliced = {}) const {
    const Graph& graph = sliced ? sliced->graph : graph_;
    Schedule made = schedule(graph, plan.partitions, policy);
    return with_dry_run(std::move(plan), std::move(made), std::move(sliced));
  }
  // `plan` with its `schedule` and its dry run.
  FittedPlan with_dry_run(partition::Plan plan, Schedule schedule,
                          std::shared_ptr<const SlicedGraph> sliced = {}) const {
    const Graph& graph = sliced ? sliced->graph : graph_;
    Traffic dry = sliced ? engine::dry_run(graph, schedule, options_.exchange_limits())
                         : engine::dry_run(graph, schedule, options_.exchange_limits(), &call_costs_);
    std::string proposed_by = plan.planner;
    if (sliced) proposed_by += ", " + sliced->describe();
    return {std::move(plan), std::move(proposed_by), false, {}, std::move(schedule),
            std::move(dry),  std::move(sliced),      {}};
  }
  bool carries() const { return !carried_.empty(); }
  double objective(const partition::Plan& plan, const Traffic& dry) const {
    switch (options_.objective) {
      case Objective::makespan:
        return dry.estimated_seconds();
      case Objective::floats:
        return static_cast<double>(dry.total_floats_moved());
      case Objective::model:
        return plan.total_cost;
    }
    return 0;
  }

  // EinDecomp's choice: of its dynamic program's plans (under the engine and the paper models) and the
  // baselines' plans for this graph, the one its dry run finds best by the objective. The dynamic program is
  // exact for its decomposable model on trees; the dry run is the engine itself. A tie (equal up to
  // rounding: plans that differ only where nothing moves) goes to the least peak block bytes on the busiest
  // rank, then to the order above.
  FittedPlan eindecomp(Extent p) const {
    std::vector<partition::Plan> candidates{make(p, "eindecomp", options_.cost_model),
                                            make(p, "eindecomp", partition::CostModel::paper)};
    for (const std::string& name : partition::planners_for(graph_))
      if (name != "eindecomp") candidates.push_back(make(p, name, options_.cost_model));
    if (streams_inputs())
      for (Extent finer : {2 * p, 4 * p})
        for (partition::CostModel model : {options_.cost_model, partition::CostModel::paper})
          candidates.push_back(make(finer, "eindecomp", model));
    std::vector<std::string> aligned(candidates.size());  // how a candidate was cut along the block shapes
    std::vector<bool> halved(candidates.size(), false);   // cut finer than the shapes
    auto align = [&](std::size_t c, Extent coarsen, Extent refine) {
      partition::Plan plan = candidates[c];
      plan.partitions = partition::shape_aligned(graph_, plan.partitions, coarsen, refine);
      candidates.push_back(std::move(plan));
      halved.push_back(refine > 1);
      aligned.push_back(", cut along the block shapes" +
                        (coarsen > 1  ? " (" + std::to_string(coarsen) + " blocks in one)"
                         : refine > 1 ? " (each block in " + std::to_string(refine) + ")"
                                      : std::string()));
    };
    const bool shapes = partition::has_block_shapes(graph_);
    if (shapes) {
      const std::size_t base = candidates.size();
      for (Extent coarsen : {1, 2, 4, 8})
        for (std::size_t c = 0; c < base; ++c) align(c, coarsen, 1);
    }
    std::vector<double> value, peak;                // peak: the busiest rank's block bytes, once dry-run
    std::vector<std::optional<FittedPlan>> costed;  // dry-run, kept while it may still win
    std::vector<std::optional<Schedule>> unwalked;  // estimated to the bit and not dry-run yet, kept likewise
    std::vector<std::size_t> first_alike;           // the first candidate with the same partitions
    double least = 0;
    std::size_t considered = 0;
    // Candidate c's dry run (of the first alike), walked now if it was only estimated, with its peak.
    auto walked = [&](std::size_t c) -> FittedPlan& {
      c = first_alike[c];
      if (!costed[c]) {
        costed[c] = with_dry_run(candidates[c], std::move(*unwalked[c]));
        unwalked[c].reset();
        std::size_t most = 0;
        for (const RankTraffic& r : costed[c]->dry_run.ranks) most = std::max(most, r.peak_block_bytes);
        peak[c] = static_cast<double>(most);
      }
      return *costed[c];
    };
    auto weigh = [&](std::size_t c) {
      considered += candidates[c].partitions_considered;
      costed.emplace_back();
      unwalked.emplace_back();
      // An earlier candidate with the same partitions has the same dry run, and wins any tie with this one.
      std::size_t same = 0;
      while (same < c && !(candidates[same].partitions == candidates[c].partitions)) ++same;
      first_alike.push_back(same);
      peak.push_back(HUGE_VAL);
      if (same < c) {
        value.push_back(value[same]);
        return;
      }
      // A candidate whose estimate without a dry run (else its communication, a bound) loses skips its dry run; one
      // estimated to the bit (engine::estimated_seconds: every vertex's calls alike) is dry-run only if it wins, for
      // its figures and to break a tie by its peak.
      Schedule made = schedule(graph_, candidates[c].partitions, options_.transitions);
      const double margin = halved[c] ? 1 + halved_margin : 1;
      std::optional<double> exact;
      if (options_.objective == Objective::makespan) {
        exact = engine::estimated_seconds(graph_, made, &call_costs_);
        const double bound = (exact ? *exact : made.communication_seconds()) * margin;
        if (c > 0 && better(least, bound)) {
          value.push_back(bound);
          return;
        }
      }
      unwalked[c] = std::move(made);
      // A halved block product re-reads the operand block it shares with its other half, unseen by the roofline
      // (6 % more time per flop for 128 × 256 halves of 256³ products): a halved plan wins only by more than that.
      value.push_back((exact ? *exact : objective(walked(c).plan, costed[c]->dry_run)) * margin);
      least = c == 0 ? value[c] : std::min(least, value[c]);
      for (std::size_t d = 0; d < c; ++d)
        if (better(least, value[d])) costed[d].reset(), unwalked[d].reset();
    };
    for (std::size_t c = 0; c < candidates.size(); ++c) weigh(c);
    // Where the fastest plan so far runs a few block products per rank, an uneven count leaves a rank idle for
    // one of them: the first candidate is also weighed with each shape block cut in two along the output's last
    // label (a few tuples, so a cheap dry run; planning many-tuple plans twice more cost McWeeny's step 2× more).
    if (shapes) {
      Extent most_tuples = 0;
      for (std::size_t c = 0; c < candidates.size(); ++c)
        if ((costed[c] || unwalked[c]) && !better(least, value[c]))
          for (const RankTraffic& r : walked(c).dry_run.ranks) most_tuples = std::max(most_tuples, r.tuples);
      if (most_tuples <= halving_tuples) {
        align(0, 1, 2);
        weigh(candidates.size() - 1);
      }
    }
    std::size_t best = candidates.size();
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (better(least, value[c])) continue;
      walked(c);
      if (best == candidates.size() || better(peak[first_alike[c]], peak[first_alike[best]])) best = c;
    }
    FittedPlan chosen = std::move(walked(best));
    if (chosen.plan.planner == "eindecomp" && chosen.plan.cost_model == partition::CostModel::paper)
      chosen.proposed_by = "eindecomp (paper model)";
    if (chosen.plan.procs != p) {
      chosen.proposed_by += " at p = " + std::to_string(chosen.plan.procs);
      chosen.procs_reason = "finer than p = " + std::to_string(p) +
                            ": its streamed inputs lower the memory per rank at no more estimated time";
    }
    chosen.proposed_by += aligned[best];
    chosen.plan.planner = "eindecomp";
    chosen.plan.cost_model = options_.cost_model;
    chosen.plan.partitions_considered = considered;
    return chosen;
  }

  // Whether EinDecomp also weighs finer partitions (p = 2R and 4R, when p is not given): on more than one rank,
  // where some graph input could be streamed (Schedule::streamed: InputReads::again, one reading edge, no
  // output). A rank then holds a share of such an input's blocks at a time instead of all it reads; with calls
  // that stay compute-bound the estimate is the same and the tie goes to the smaller peak. On one rank the
  // plan stays one block per vertex, each vertex one kernel call on whole operands (a memory limit still
  // finds finer plans).
  bool streams_inputs() const {
    if (ranks_ < 2 || options_.procs) return false;
    return std::find(streamed_.begin(), streamed_.end(), true) != streamed_.end();
  }

  // The requested plan under the options' transitions, with its dry run.
  FittedPlan requested(Extent p, const std::string& planner) const {
    if (planner == "eindecomp" && options_.cost_model == partition::CostModel::engine &&
        options_.objective != Objective::model)
      return eindecomp(p);
    return cost(make(p, planner, options_.cost_model), options_.transitions);
  }

 private:
  // The memory model's budget on these ranks, with the kernels' temporaries of a call as the dry run counts them.
  partition::MemoryBudget memory_budget(double bytes) const {
    partition::MemoryBudget budget{bytes, static_cast<Extent>(ranks_), {}, streamed_};
    budget.call_bytes = [this](VertexId v, const std::vector<Extent>& parts) {
      const ResolvedEinSum& r = graph_.resolved(v);
      std::vector<Bound> blocks;
      for (const std::string& labels : r.einsum().inputs) {
        Bound block;
        const std::vector<std::size_t> at = r.positions(labels);
        for (std::size_t k = 0; k < labels.size(); ++k)
          block.push_back((r.extent(labels[k]) + parts[at[k]] - 1) / parts[at[k]]);
        blocks.push_back(std::move(block));
      }
      return static_cast<double>(call_costs_.scratch_bytes(v, blocks, false));
    };
    return budget;
  }

  const Graph& graph_;
  int ranks_;
  const Options& options_;
  const partition::Carried& carried_;
  const std::vector<bool> streamed_;  // the inputs that may be streamed (streamed_inputs)
  mutable CallCosts call_costs_;      // the kernel calls' prices, shared by the candidates' dry runs
  mutable ScheduleMemo memo_;         // what the candidates' schedules share
};

// Under the engine model, the plan's costs are its dry run's: per vertex the floats moved to place its
// operands (join: repartitions included) and its partial results (agg).
void cost_by_dry_run(const Graph& graph, FittedPlan& fitted, Objective objective) {
  partition::Plan& plan = fitted.plan;
  const Traffic& dry = fitted.dry_run;
  if (plan.cost_model != partition::CostModel::engine || objective == Objective::model) return;
  fitted.costed_by_dry_run = true;
  plan.total_cost = static_cast<double>(dry.total_floats_moved());
  for (VertexId v = 0; v < graph.size(); ++v)
    if (!graph.vertex(v).is_input())
      plan.costs[v] = {static_cast<double>(dry.floats_moved[v] - dry.partials_moved[v]),
                       static_cast<double>(dry.partials_moved[v]), 0.0};
}

// How many doublings beyond the requested p fit_memory tries at most: each costs dry runs whose kernel calls
// grow with p.
constexpr int max_memory_doublings = 10;

// Slicing (docs/planner.md "Slicing"): the values fit_memory slices, at most this many, the largest
// intermediates first, each along every dimension, in as many passes as each divisor of the extent up to this.
constexpr std::size_t max_sliced_values = 3;
constexpr Extent max_slicing_passes = 64;

// The memory-constrained search (docs/planner.md "Memory-constrained search") runs at most this many times per p,
// its budget the limit calibrated by how the model and the dry run compare.
constexpr int max_budget_corrections = 4;

struct SlicingCandidate {
  VertexId value;
  int dimension;
  std::vector<Extent> passes;  // the divisors of the extent from 2 to max_slicing_passes, increasing
};

// The largest intermediate values (no inputs, no outputs: an output is held whole anyway), largest first, each
// with every dimension that can be sliced.
std::vector<SlicingCandidate> slicing_candidates(const Graph& graph) {
  std::vector<VertexId> values;
  for (VertexId v = 0; v < graph.size(); ++v)
    if (!graph.vertex(v).is_input() &&
        std::find(graph.outputs().begin(), graph.outputs().end(), v) == graph.outputs().end())
      values.push_back(v);
  std::stable_sort(values.begin(), values.end(), [&](VertexId a, VertexId b) {
    return num_elements(graph.vertex(a).bound) > num_elements(graph.vertex(b).bound);
  });
  if (values.size() > max_sliced_values) values.resize(max_sliced_values);
  std::vector<SlicingCandidate> candidates;
  for (VertexId v : values)
    for (std::size_t d = 0; d < graph.vertex(v).bound.size(); ++d) {
      const Extent extent = graph.vertex(v).bound[d];
      std::vector<Extent> passes;
      for (Extent k = 2; k <= std::min(extent, max_slicing_passes); ++k)
        if (extent % k == 0) passes.push_back(k);
      if (!passes.empty()) candidates.push_back({v, static_cast<int>(d), std::move(passes)});
    }
  return candidates;
}

// The requested plan if its busiest rank fits options.memory_limit (or there is none); else, with automatic
// transitions, the same plan with point-to-point only, then with collectives wherever they apply; else, of
// every planner's plan at p, 2p and 4p (each under those policies), the best by the objective that fits; where
// none of those fits, the same at 8p, 16p, ... (at most 1024p) while the smallest peak falls, to the first that
// fits. Once the plans at 4p are tried, the requested plan and the closest so far are tried with a label sliced
// (slicing_candidates, the fewest passes that fit; the region without and with the producers before the value), and
// the best by the objective of all that fit is taken.
// The error for a limit nothing fits names the smallest peak any plan tried reached.
FittedPlan fit_memory(const Graph& graph, int ranks, const Options& options, FittedPlan requested,
                      const PlanCosting& costing) {
  const std::optional<std::size_t>& memory_limit = options.memory_limit;
  if (!memory_limit) return requested;
  // The busiest rank's estimated peak, where it falls, and the plan's objective.
  struct Estimate {
    std::size_t peak = 0;
    int rank = 0;
    std::string vertex;
    double objective = 0;
  };
  auto estimate = [&](const FittedPlan& f) {
    Estimate e;
    for (int r = 0; r < ranks; ++r)
      if (f.dry_run.peak_memory_bytes[r] > e.peak)
        e.peak = f.dry_run.peak_memory_bytes[r], e.rank = r,
        e.vertex = f.graph(graph).vertex(f.dry_run.peak_vertex[r]).name;
    e.objective = costing.objective(f.plan, f.dry_run);
    return e;
  };
  std::vector<TransitionPolicy> policies{options.transitions};
  if (options.transitions == TransitionPolicy::automatic)
    policies.insert(policies.end(), {TransitionPolicy::point_to_point, TransitionPolicy::collectives});
  // The plan, costed under the first policy, under the first policy it fits with, else nothing; `closest`
  // keeps the smallest miss.
  std::optional<Estimate> closest;
  std::string closest_plan;
  std::vector<partition::Plan> bases;  // unsliced plans to slice: the requested one and the closest
  // The smallest peak of the unsliced plans: the ladder of p goes on while it falls (slicing aside).
  std::size_t unsliced_smallest = std::numeric_limits<std::size_t>::max();
  auto fitting = [&](FittedPlan costed) -> std::optional<std::pair<FittedPlan, Estimate>> {
    const partition::Plan plan = costed.plan;
    const std::string proposed_by = costed.proposed_by;
    const std::shared_ptr<const SlicedGraph> sliced = costed.sliced;
    for (std::size_t i = 0; i < policies.size(); ++i) {
      FittedPlan f = i == 0 ? std::move(costed) : costing.cost(plan, policies[i], sliced);
      f.proposed_by = proposed_by;
      const Estimate e = estimate(f);
      if (e.peak <= *memory_limit) return std::pair{std::move(f), e};
      if (!sliced) unsliced_smallest = std::min(unsliced_smallest, e.peak);
      if (!closest || e.peak < closest->peak) {
        closest = e;
        closest_plan = plan.planner + " at p = " + std::to_string(plan.procs) +
                       (sliced ? ", " + sliced->describe() : std::string());
        bases.resize(1);
        if (!sliced && !(plan.partitions == bases[0].partitions)) bases.push_back(plan);
      }
    }
    return std::nullopt;
  };
  const Extent procs = requested.plan.procs;
  bases.push_back(requested.plan);
  // How the memory-constrained search's model compares with the dry run, on the requested plan: model / dry run.
  double model_ratio = 0;
  if (const std::optional<double> model = costing.model_peak(requested.plan)) {
    if (const std::size_t peak = estimate(requested).peak; peak > 0) model_ratio = *model / static_cast<double>(peak);
  }
  if (auto fit = fitting(std::move(requested))) return std::move(fit->first);

  std::vector<std::string> planners{options.planner};
  for (const std::string& name : partition::planners_for(graph))
    if (name != options.planner) planners.push_back(name);
  // The best fitting plan by the objective, unsliced and sliced: the ladder's stop rule looks at the first.
  std::optional<std::pair<FittedPlan, Estimate>> best, best_sliced;
  auto keep = [](std::optional<std::pair<FittedPlan, Estimate>> fit,
                 std::optional<std::pair<FittedPlan, Estimate>>& in) {
    if (fit && (!in || better(fit->second.objective, in->second.objective))) in = std::move(fit);
  };
  // p, 2p and 4p; where nothing fits there, finer p (a rank then holds smaller blocks of the inputs it streams
  // and of the values it computes) while the smallest peak still falls, up to the first p with a plan that fits.
  for (Extent p = procs, level = 0; level <= max_memory_doublings; p *= 2, ++level) {
    const std::size_t smallest = unsliced_smallest;
    for (const std::string& planner : planners) {
      if (p == procs && planner == options.planner) continue;  // `requested`, which does not fit
      keep(fitting(costing.cost(costing.make(p, planner, options.cost_model), policies[0])), best);
    }
    // EinDecomp's memory-constrained search, its model calibrated by the dry run: the budget is the limit scaled by
    // the model's peak over the dry run's, of the requested plan first and then of each plan it finds that does
    // not fit, until one fits or the budget stops changing.
    for (int attempt = 0; attempt < max_budget_corrections && model_ratio > 0; ++attempt) {
      const double budget = 0.98 * model_ratio * static_cast<double>(*memory_limit);
      std::optional<partition::Plan> plan = costing.make_within(p, budget);
      if (!plan) break;
      const std::optional<double> model = costing.model_peak(*plan);
      FittedPlan costed = costing.cost(std::move(*plan), policies[0]);
      costed.proposed_by = "eindecomp (memory-constrained search)";
      const std::size_t peak = estimate(costed).peak;
      std::optional<std::pair<FittedPlan, Estimate>> fit = fitting(std::move(costed));
      const bool fits = fit.has_value();
      keep(std::move(fit), best);
      if (fits || !model || peak == 0) break;
      const double ratio = *model / static_cast<double>(peak);
      if (ratio >= model_ratio) break;  // the same budget or a larger one: the same plan again
      model_ratio = ratio;
    }
    if (level == 2 && !costing.carries())  // the plans at p..4p tried: now with a label sliced
      for (const partition::Plan& base : std::vector<partition::Plan>(bases))
        for (const SlicingCandidate& candidate : slicing_candidates(graph))
          for (bool before : {false, true})
            for (Extent passes : candidate.passes) {
              std::optional<SlicedGraph> sliced =
                  slice_graph(graph, candidate.value, candidate.dimension, passes, before);
              if (!sliced || sliced->before != before) break;  // `before` took in no producer: tried already
              partition::Plan plan = partition::sliced_plan(*sliced, base);
              std::optional<std::pair<FittedPlan, Estimate>> fit = fitting(
                  costing.cost(std::move(plan), policies[0], std::make_shared<const SlicedGraph>(std::move(*sliced))));
              const bool fits = fit.has_value();
              keep(std::move(fit), best_sliced);
              if (fits) break;  // more passes cost more calls
            }
    if (level >= 2 && (best || unsliced_smallest >= smallest)) break;
  }
  keep(std::move(best_sliced), best);
  if (best) {
    FittedPlan& chosen = best->first;
    if (chosen.plan.procs != procs)
      chosen.procs_reason = "the plans at p = " + std::to_string(procs) + " do not fit the memory limit";
    return std::move(chosen);
  }
  throw Error("no plan fits the memory limit of " + std::to_string(*memory_limit) + " bytes per rank; the closest (" +
              closest_plan + ") needs " + std::to_string(closest->peak) + " bytes on rank " +
              std::to_string(closest->rank) + " at vertex '" + closest->vertex + "', " +
              std::to_string(closest->peak - *memory_limit) + " bytes more than the limit");
}

}  // namespace

FittedPlan plan_in_graph_order(const Graph& graph, int ranks, const Options& options,
                               const partition::Carried& carried) {
  const Extent procs = options.procs ? *options.procs : partition::procs_for_ranks(ranks);
  const PlanCosting costing(graph, ranks, options, carried);
  FittedPlan fitted = fit_memory(graph, ranks, options, costing.requested(procs, options.planner), costing);
  cost_by_dry_run(fitted.graph(graph), fitted, options.objective);
  if (fitted.procs_reason.empty() && fitted.plan.procs != ranks && options.procs)
    fitted.procs_reason = "set by --procs";
  return fitted;
}

}  // namespace einrel::engine
