#ifndef EINREL_RUNREPORT_HPP
#define EINREL_RUNREPORT_HPP

#include <einrel_Bound.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_ExecutionReport.hpp>
#include <einrel_Graph.hpp>
#include <einrel_Json.hpp>
#include <einrel_Options.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Traffic.hpp>

#include <optional>
#include <string>
#include <vector>

// The report of one execution, as `einrel run --report` and einrel_program_report (the C API) give it.
namespace einrel::io {

// How one operand of a vertex reached its join tuples: "point_to_point" (the exchange; also when nothing
// moves), "collectives" (with the synthesized steps, engine::Transition), "shared" (the blocks of an
// earlier operand) or "partials" (a producer's partial blocks, combined where they lie: Schedule::on_partials).
struct OperandReport {
  std::string name;
  std::string path;
  std::string steps;  // redistribute::mesh::steps_text, for collectives
};

// What one execution measured for one EinSum vertex (docs/cli.md).
struct VertexReport {
  std::string name;
  std::string equation;
  Bound bound;
  std::string partition;      // the partition vector, e.g. "{i:2,j:1,k:2}"
  engine::VertexTimes times;  // on the run's timed rank (engine::ExecutionReport::timed_rank)
  Extent floats_moved = 0;
  std::vector<OperandReport> operands;
  bool deferred_reduction = false;  // partial results left to the reader's collectives (Schedule::deferred)
};

// An output holding non-finite values: its NaN and ±Inf element counts.
struct NonFiniteReport {
  std::string name;
  long long nan = 0, inf = 0;
};

// --screen (docs/sparse.md "Screening by norms"): the threshold (0: none), the block products screened out and
// the result blocks truncated, as the schedule decided them (the same in the plan and the run).
struct Screening {
  double threshold = 0;
  Extent products = 0, blocks = 0;
  static Screening of(const engine::Schedule& schedule) {
    return {schedule.screen(), schedule.screened_products(), schedule.truncated_blocks()};
  }
};

// As the value of the key `j` has just written: null without screening, else {"threshold",
// "screened_products", "truncated_blocks"}.
void write_screening(JsonWriter& j, const Screening& s);

// The agreements on failure one execution of the plan makes and their model time, which estimated_seconds leaves
// out (engine::Traffic::failure_agreements; docs/planner.md "The objective").
struct Agreements {
  Extent count = 0;
  double seconds = 0;
  static Agreements of(const engine::Traffic& dry_run) {
    return {dry_run.failure_agreements, dry_run.agreement_seconds};
  }
};

// As the value of the key `j` has just written: {"count", "seconds"}.
void write_agreements(JsonWriter& j, const Agreements& a);

struct RunReport {
  std::string graph;
  int num_ranks = 1;
  int computing_ranks = 0;  // ranks that ran at least one join tuple
  std::vector<engine::RankTraffic> ranks;
  // Per rank, the most bytes its allocator held for the run: pooled blocks, cached ones included, and the
  // exchange's buffers (peak_block_bytes counts the engine's live blocks only).
  std::vector<std::size_t> peak_allocated_bytes;
  // Per rank, the dry run's estimate of that figure (engine::Traffic::peak_memory_bytes), which
  // --memory-limit holds the plan to.
  std::vector<std::size_t> estimated_peak_allocated_bytes;
  std::string backend;
  int threads = 1;
  std::string thread_note;  // advice on binding threads, where it matters (thread_binding_note)
  std::string planner;
  std::string cost_model;  // the model the planner minimised and predicted_cost is in
  Extent procs = 1;
  std::string procs_reason;          // why p is not num_ranks (engine::FittedPlan::procs_reason)
  std::string transitions = "auto";  // the transition policy (engine::TransitionPolicy)
  // The run's times, each the slowest rank's: total = memory + inputs + evaluation.
  int timed_rank = 0;                 // the rank whose vertices took longest in all: the vertices' times are its
  double memory_seconds = 0;          // taking and touching the evaluation's block memory (engine::warm_memory)
  double input_seconds = 0;           // reading (or generating) the inputs before the evaluation
  double evaluation_seconds() const;  // the vertices, on the timed rank: Σ of their times
  double total_seconds() const { return memory_seconds + input_seconds + evaluation_seconds(); }
  // The evaluation less the reads of inputs during it (streamed, read again): what GFLOP/s figures divide by.
  double compute_seconds() const;
  std::vector<VertexReport> vertices;
  std::vector<NonFiniteReport> nonfinite_outputs;  // outputs with NaN or ±Inf elements (IEEE results)
  std::optional<double> predicted_cost;            // none until a planner predicts one
  double estimated_seconds = 0;                    // the plan's estimated makespan (engine::Traffic)
  Agreements agreements;                           // its agreements on failure, beside the estimate
  std::string objective = "makespan";              // what planning minimised (engine::Objective)
  std::string proposed_by;                         // the planner whose partitions the plan has
  Screening screening;                             // --screen: what the plan screened
  // --check: the largest normwise relative difference from the unpartitioned evaluation, and its bound
  std::optional<double> check_error, check_tolerance;

  Extent floats_moved() const;
};

// The report of one execution of `graph` as `fitted` planned it, from what every rank measured (`figures`,
// engine::gather_execution_report): the plan, the schedule's operand paths and the figures. The caller fills
// what only it knows: graph (a file name), backend, threads and its notes, input and memory seconds, --check.
RunReport run_report(const Graph& graph, const engine::FittedPlan& fitted, const engine::ExecutionReport& figures,
                     engine::Objective objective);

// The run report as JSON: total_seconds, predicted_cost, floats_moved and vertices (docs/cli.md),
// plus the run's context (graph, ranks, backend, planner).
std::string report_json(const RunReport& report);

// The per-rank list of a run report or a dry run, as the value of the key `j` has just written:
// [{"rank", "floats_sent", "floats_received", "peak_block_bytes", "tuples"[, "peak_allocated_bytes"]
// [, "estimated_peak_allocated_bytes"]}, ...], the last two when `allocated` and `estimated` have an entry
// per rank.
void write_ranks(JsonWriter& j, const std::vector<engine::RankTraffic>& ranks,
                 const std::vector<std::size_t>& allocated = {}, const std::vector<std::size_t>& estimated = {});

}  // namespace einrel::io

#endif
