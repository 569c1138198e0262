#include <einrel_Baselines.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_Error.hpp>
#include <einrel_LayerRoles.hpp>
#include <einrel_PlanSearch.hpp>

#include <algorithm>
#include <limits>

namespace einrel::partition {
namespace {

using search::Search;

// Refinement stops after this many sweeps even if the last one still improved (every accepted move
// strictly lowers the total, so it would stop anyway; the cap bounds the planning time).
constexpr int max_refine_sweeps = 8;

constexpr double infinity = std::numeric_limits<double>::infinity();

// The longest path (in vertices) through unplanned EinSum vertices, the first by vertex order on ties.
std::vector<VertexId> longest_unplanned_path(const Search& s) {
  const Graph& graph = s.graph();
  const VertexId none = graph.size();
  std::vector<std::size_t> length(graph.size(), 0);
  std::vector<VertexId> previous(graph.size(), none);
  VertexId end = none;
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input() || s.planned(v)) continue;
    length[v] = 1;
    for (VertexId u : graph.vertex(v).inputs)
      if (length[u] + 1 > length[v]) {
        length[v] = length[u] + 1;
        previous[v] = u;
      }
    if (end == none || length[v] > length[end]) end = v;
  }
  std::vector<VertexId> path;
  for (VertexId v = end; v != none; v = previous[v]) path.push_back(v);
  std::reverse(path.begin(), path.end());
  return path;
}

// §8.4: plans the longest unplanned path by the dynamic program, then the next, until every vertex is
// planned. Returns the paths in the order planned; none where some path has no plan within the memory budget.
std::vector<std::vector<VertexId>> linearize(Search& s) {
  std::vector<std::vector<VertexId>> paths;
  for (auto path = longest_unplanned_path(s); !path.empty(); path = longest_unplanned_path(s)) {
    if (!s.optimize_path(path) || !s.within_budget()) return {};  // nothing within the memory budget
    paths.push_back(std::move(path));
  }
  return paths;
}

// Block-coordinate descent: each block (a path of consecutive vertices) is re-planned by the dynamic program
// against everything else fixed and kept only when its cost, hence the total, falls by more than rounding.
// A block is revisited only after a neighbouring vertex changed.
void refine(Search& s, const std::vector<std::vector<VertexId>>& blocks) {
  const Graph& graph = s.graph();
  std::vector<std::vector<std::size_t>> blocks_of(graph.size());
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (VertexId v : blocks[b]) blocks_of[v].push_back(b);
  std::vector<std::vector<VertexId>> neighbours(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v)
    for (VertexId u : graph.vertex(v).inputs) {
      neighbours[v].push_back(u);
      neighbours[u].push_back(v);
    }
  std::vector<bool> stale(blocks.size(), true), in_block(graph.size(), false);
  // v changed: every block holding v or a neighbour of v may now do better.
  auto touch = [&](VertexId v) {
    for (std::size_t b : blocks_of[v]) stale[b] = true;
    for (VertexId u : neighbours[v])
      for (std::size_t b : blocks_of[u]) stale[b] = true;
  };
  for (int sweep = 0; sweep < max_refine_sweeps && std::count(stale.begin(), stale.end(), true) > 0; ++sweep)
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (!stale[b]) continue;
      stale[b] = false;
      const std::vector<VertexId>& block = blocks[b];
      for (VertexId v : block) in_block[v] = true;
      const double before = s.block_cost(block, in_block);
      const std::vector<int> kept = s.choices();
      for (VertexId v : block) s.unplan(v);
      // Under a memory budget a move must also keep the consumers planned earlier within it.
      if (s.optimize_path(block) && s.within_budget() && s.block_cost(block, in_block) < before * (1 - 1e-12)) {
        for (VertexId v : block)
          if (s.choices()[v] != kept[v]) touch(v);
        stale[b] = false;  // just optimized against the current neighbours
      } else {
        s.set_choices(kept);
      }
      for (VertexId v : block) in_block[v] = false;
    }
}

// The blocks refinement works on: the linearization's paths, then every vertex alone.
std::vector<std::vector<VertexId>> refinement_blocks(const Graph& graph, std::vector<std::vector<VertexId>> paths) {
  for (VertexId v = 0; v < graph.size(); ++v)
    if (!graph.vertex(v).is_input()) paths.push_back({v});
  return paths;
}

}  // namespace

bool is_tree_shaped(const Graph& graph) {
  std::vector<int> uses(graph.size(), 0);
  for (const Vertex& v : graph.vertices())
    for (VertexId u : v.inputs)
      if (!graph.vertex(u).is_input() && ++uses[u] > 1) return false;
  return true;
}

Partitioning eindecomp_tree(const Graph& graph, Extent p, CostModel model) {
  if (!is_tree_shaped(graph))
    throw Error("the exact EinDecomp dynamic program needs every EinSum vertex to feed at most one operand");
  Search s(graph, p, model);
  s.optimize_tree();
  return {s.partitions(), s.considered()};
}

Partitioning eindecomp_linearized(const Graph& graph, Extent p, CostModel model, bool refine_plan) {
  Search s(graph, p, model);
  const auto paths = linearize(s);
  if (refine_plan) refine(s, refinement_blocks(graph, paths));
  return {s.partitions(), s.considered()};
}

namespace {

// EinDecomp on `s`, a search with or without a memory budget: the dynamic program on trees; elsewhere the refined
// linearization, and the same refinement started from the greedy plan and from every baseline's plan (those
// within the budget): the cheapest. Nothing where no plan within the budget was found.
std::optional<Partitioning> eindecomp_search(Search& s, Extent p) {
  const Graph& graph = s.graph();
  if (!s.fits()) return std::nullopt;
  if (is_tree_shaped(graph)) {
    s.optimize_tree();
    if (!s.fits()) return std::nullopt;
    return Partitioning{s.partitions(), s.considered()};
  }
  const auto paths = linearize(s);
  const bool linearized = !paths.empty();
  const auto blocks = refinement_blocks(graph, paths);
  std::optional<std::vector<int>> best;
  double best_cost = infinity;
  auto keep_if_cheaper = [&] {
    refine(s, blocks);
    if (s.total_cost() < best_cost * (1 - 1e-12)) {
      best = s.choices();
      best_cost = s.total_cost();
    }
  };
  if (linearized) keep_if_cheaper();
  s.optimize_greedily();
  if (s.fits() && s.within_budget()) keep_if_cheaper();
  std::vector<std::vector<PartitionVector>> restarts{sqrt_baseline(graph, p).partitions,
                                                     data_baseline(graph, p).partitions};
  if (const auto roles = layer_roles(graph))
    for (Partitioning& baseline : llm_baselines(graph, p, *roles)) restarts.push_back(std::move(baseline.partitions));
  for (const std::vector<PartitionVector>& restart : restarts) {
    s.set_partitions(restart);
    if (s.within_budget()) keep_if_cheaper();
  }
  if (!best) return std::nullopt;
  s.set_choices(*best);
  return Partitioning{s.partitions(), s.considered()};
}

}  // namespace

Partitioning eindecomp(const Graph& graph, Extent p, CostModel model) {
  Search s(graph, p, model);
  return *eindecomp_search(s, p);
}

std::optional<Partitioning> eindecomp_within(const Graph& graph, Extent p, CostModel model,
                                             const MemoryBudget& budget) {
  Search s(graph, p, model, &budget);
  return eindecomp_search(s, p);
}

double memory_model_peak(const Graph& graph, const std::vector<PartitionVector>& partitions, Extent p, CostModel model,
                         const MemoryBudget& budget) {
  Search s(graph, p, model, &budget);
  s.set_partitions(partitions);
  return s.peak_bytes();
}

}  // namespace einrel::partition
