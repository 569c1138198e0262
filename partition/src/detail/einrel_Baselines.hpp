#ifndef EINREL_BASELINES_HPP
#define EINREL_BASELINES_HPP

#include <einrel_LayerRoles.hpp>
#include <einrel_Planner.hpp>

#include <vector>

// The baseline planners EinDecomp is compared with (docs/planner.md). Each gives every
// EinSum vertex a vector of viable(v, p): product p, or the fallback when the extents cannot reach p.
namespace einrel::partition {

// "sqrt" (the paper's SQRT): the prime factors of p (the log2 p doublings for a power of two), largest first,
// go round-robin to the label with the fewest parts (output labels before aggregated ones, then equation
// order) while its extent allows, whatever the extents: a matrix product gets √p × √p output blocks at p = 4,
// the 3D algorithm at p = 8 or 64, and 3 × 2 at p = 6.
Partitioning sqrt_baseline(const Graph& graph, Extent p);

// "data" (data parallelism, as DDP): the batch axis is the dimension class (layer_roles' DimensionClasses)
// of the first output label of the first EinSum vertex with an output. Every vertex cuts its labels of that
// axis first, output or aggregated (a weight gradient sums over the cut batch: partial sums reduced, DDP's
// all-reduce), as far as their extents allow, then its other output labels in order, then the aggregated
// ones. On a single product this is "cut the first output label, then spill".
Partitioning data_baseline(const Graph& graph, Extent p);

// "greedy" (DTensor-like per-operator choice): in topological order each vertex takes its cheapest viable
// vector (join + agg + repartition from its producers' chosen partitions), ignoring its consumers.
Partitioning greedy_baseline(const Graph& graph, Extent p, CostModel model);

// The LLM baselines of eindecomp.txt §9 (experiment 3) on graphs holding a transformer layer (layer_roles;
// docs/planner.md). Each vertex hands its factors of p first to the labels of the preferred dimension classes
// (output labels before aggregated ones), then to the next tier, then to its other labels, output first:
// "megatron" (tensor parallelism): heads and FFN hidden widths, then the sequence (the norms, residual sums
//   and the all-reduce after each row-parallel product become Megatron-SP's sequence split);
// "sequence": the sequence, then heads;
// "attention": heads, then the sequence (the FFN runs split by sequence).
// Throw Error naming the planner when the graph has no attention scores.
Partitioning megatron_baseline(const Graph& graph, Extent p);
Partitioning sequence_baseline(const Graph& graph, Extent p);
Partitioning attention_baseline(const Graph& graph, Extent p);
// The three, for roles already found (layer_roles(graph)), in the order above.
std::vector<Partitioning> llm_baselines(const Graph& graph, Extent p, const LayerRoles& roles);

}  // namespace einrel::partition

#endif
