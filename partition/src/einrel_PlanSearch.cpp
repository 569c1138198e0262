#include <einrel_CostModel.hpp>
#include <einrel_Error.hpp>
#include <einrel_PlanSearch.hpp>
#include <einrel_Viable.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace einrel::partition::search {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// A producer whose table every table-sourced operand reads: the whole graph is one dynamic program.
constexpr VertexId every_producer = static_cast<VertexId>(-1);

// Partition vectors projected onto one tensor's labels, hashed for intern().
struct PartsHash {
  std::size_t operator()(const std::vector<Extent>& parts) const {
    std::size_t h = parts.size();
    for (Extent part : parts) h = h * 1000003u ^ static_cast<std::size_t>(part);
    return h;
  }
};
using PartsIndex = std::unordered_map<std::vector<Extent>, int, PartsHash>;

// Index of the projection of `parts` onto `at` in `distinct`, appending it when new; `scratch` holds the
// projection, so a vector already seen allocates nothing.
int intern(const std::vector<Extent>& parts, const std::vector<std::size_t>& at,
           std::vector<std::vector<Extent>>& distinct, PartsIndex& index, std::vector<Extent>& scratch) {
  scratch.clear();
  for (std::size_t pos : at) scratch.push_back(parts[pos]);
  const auto found = index.find(scratch);
  if (found != index.end()) return found->second;
  index.emplace(scratch, static_cast<int>(distinct.size()));
  distinct.push_back(scratch);
  return static_cast<int>(distinct.size()) - 1;
}

// The operands of v that read one producer's table (two when v reads the same producer twice), with the
// producer's entries that survive pruning and the memoized minimum for each combination of v's operand
// partitions.
struct TableGroup {
  const Table* table = nullptr;
  std::vector<std::size_t> operands;
  std::vector<int> kept;
  struct Best {
    double cost;
    int entry;
  };
  std::unordered_map<std::uint64_t, Best> memo;
};

}  // namespace

Candidates candidates(const Graph& graph, VertexId v, Extent p, CostModel model) {
  const ResolvedEinSum& resolved = graph.resolved(v);
  const EinSum& e = resolved.einsum();
  const EinSumCost cost(resolved, model);
  Candidates cand;
  cand.d = viable(resolved, p);
  cand.operands.resize(e.arity());
  cand.operand_of.resize(e.arity());
  const std::vector<std::size_t> output_at = resolved.positions(e.output);
  std::vector<std::vector<std::size_t>> operand_at;
  for (const std::string& labels : e.inputs) operand_at.push_back(resolved.positions(labels));
  PartsIndex output_index;
  std::vector<PartsIndex> operand_index(e.arity());
  std::vector<Extent> scratch;
  for (const PartitionVector& d : cand.d) {
    cand.local.push_back(cost.join(d.parts()) + cost.aggregation(d.parts()));
    cand.output_of.push_back(intern(d.parts(), output_at, cand.outputs, output_index, scratch));
    for (std::size_t k = 0; k < e.arity(); ++k)
      cand.operand_of[k].push_back(intern(d.parts(), operand_at[k], cand.operands[k], operand_index[k], scratch));
  }
  return cand;
}

EdgeCosts::EdgeCosts(const Bound& bound, const std::vector<std::vector<Extent>>& produced,
                     const std::vector<std::vector<Extent>>& required, CostModel model)
    : bound_(bound), model_(model), produced_(&produced), required_(&required) {}

double EdgeCosts::operator()(int produced, int required) const {
  if (cost_.empty()) cost_.assign(produced_->size() * required_->size(), std::nan(""));
  double& c = cost_[produced * required_->size() + required];
  if (std::isnan(c)) c = repartition_cost(bound_, (*produced_)[produced], (*required_)[required], model_);
  return c;
}

int Table::argmin() const {
  int best_output = -1;
  for (std::size_t o = 0; o < cost.size(); ++o)
    if (best_output < 0 || cost[o] < cost[best_output]) best_output = static_cast<int>(o);
  return best_output;
}

Table step(const Candidates& cand, const std::vector<Source>& sources, const std::vector<FixedConsumer>& consumers,
           const Room& room) {
  const std::size_t arity = sources.size();
  std::vector<double> consumer_cost(cand.outputs.size(), 0);
  for (std::size_t o = 0; o < cand.outputs.size(); ++o)
    for (const FixedConsumer& w : consumers) consumer_cost[o] += (*w.costs)(static_cast<int>(o), w.required);

  std::vector<TableGroup> groups;
  for (std::size_t k = 0; k < arity; ++k) {
    if (!sources[k].table) continue;
    if (!groups.empty() && groups.back().table == sources[k].table) {
      groups.back().operands.push_back(k);
    } else {
      groups.push_back({});
      groups.back().table = sources[k].table;
      groups.back().operands = {k};
    }
  }

  // Prune: an entry e with M[e] > M[e*] + (e*'s largest repartition into v) never beats e*.
  for (TableGroup& g : groups) {
    const Table& table = *g.table;
    const int top = table.argmin();
    double reach = 0;
    for (std::size_t k : g.operands) {
      double largest = 0;
      for (int j = 0; j < sources[k].costs->num_required(); ++j)
        largest = std::max(largest, (*sources[k].costs)(top, j));
      reach += largest;
    }
    // Under a budget e* may not fit where a pruned entry would: nothing is pruned but the unreachable entries.
    const double keep_below = room.memory ? infinity : table.cost[top] + reach;
    for (std::size_t e = 0; e < table.cost.size(); ++e)
      if (table.cost[e] <= keep_below && table.cost[e] < infinity) g.kept.push_back(static_cast<int>(e));
  }

  Table t;
  t.cost.assign(cand.outputs.size(), infinity);
  t.best.assign(cand.outputs.size(), -1);
  t.peak.assign(cand.outputs.size(), 0);
  t.producer_output.assign(cand.d.size() * arity, -1);
  for (std::size_t c = 0; c < cand.d.size(); ++c) {
    double total = cand.local[c];
    for (std::size_t k = 0; k < arity; ++k)
      if (sources[k].fixed >= 0) total += (*sources[k].costs)(sources[k].fixed, cand.operand_of[k][c]);
    // Under a budget: the candidate's blocks and the exchange buffers of what it moves so far; what the table
    // groups' repartitions may still add (`room_left`), in floats moved.
    double held = room.memory ? (*room.memory)[c] + room.exchange_bytes_per_float * total : 0;
    if (room.memory && held > room.budget) continue;
    double room_left = room.memory ? (room.budget - held) / room.exchange_bytes_per_float : infinity;
    double peak = 0;
    bool fits = true;
    for (TableGroup& g : groups) {
      std::uint64_t key = 0;
      for (std::size_t k : g.operands) key = key * cand.operands[k].size() + cand.operand_of[k][c];
      auto repartitions = [&](int e) {
        double moved = 0;
        for (std::size_t k : g.operands) moved += (*sources[k].costs)(e, cand.operand_of[k][c]);
        return moved;
      };
      auto it = g.memo.find(key);
      if (it == g.memo.end()) {
        TableGroup::Best best{infinity, -1};
        for (int e : g.kept)
          if (const double cost = g.table->cost[e] + repartitions(e); cost < best.cost) best = {cost, e};
        it = g.memo.emplace(key, best).first;
      }
      TableGroup::Best chosen = it->second;
      if (chosen.entry >= 0 && repartitions(chosen.entry) > room_left) {  // the cheapest entry within the room
        chosen = {infinity, -1};
        for (int e : g.kept)
          if (const double moved = repartitions(e); moved <= room_left && g.table->cost[e] + moved < chosen.cost)
            chosen = {g.table->cost[e] + moved, e};
      }
      if (chosen.entry < 0) {
        fits = false;
        break;
      }
      total += chosen.cost;
      if (room.memory) {
        const double moved = repartitions(chosen.entry);
        room_left -= moved;
        held += room.exchange_bytes_per_float * moved;
        peak = std::max(peak, g.table->peak[chosen.entry]);
      }
      for (std::size_t k : g.operands) t.producer_output[c * arity + k] = chosen.entry;
    }
    if (!fits) continue;
    peak = std::max(peak, held);
    const int o = cand.output_of[c];
    total += consumer_cost[o];
    if (total < t.cost[o] || (total == t.cost[o] && peak < t.peak[o])) {
      t.cost[o] = total;
      t.best[o] = static_cast<int>(c);
      t.peak[o] = peak;
    }
  }
  return t;
}

Search::Search(const Graph& graph, Extent p, CostModel model, const MemoryBudget* budget)
    : graph_(graph),
      cand_(graph.size(), nullptr),
      edges_(graph.size()),
      consumers_(graph.size()),
      tables_(graph.size()),
      choice_(graph.size(), -1) {
  const std::vector<VertexId> first = first_of_equal_einsums(graph);
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input()) continue;
    cand_[v] = first[v] == v ? &distinct_candidates_.emplace_back(candidates(graph, v, p, model)) : cand_[first[v]];
  }
  if (budget) {  // what each candidate holds: its own operands and result, and the values alive beside it
    budget_ = budget->bytes_per_rank;
    ranks_ = budget->ranks;
    const std::vector<double> resident = resident_bytes(graph, *budget);
    memory_.resize(graph.size());
    for (VertexId v = 0; v < graph.size(); ++v)
      if (cand_[v])
        for (const PartitionVector& d : cand_[v]->d)
          memory_[v].push_back(resident[v] + vertex_bytes(graph, v, d.parts(), *budget));
  }
  std::map<std::tuple<const Candidates*, const Candidates*, std::size_t>, const EdgeCosts*> edge_index;
  for (VertexId v = 0; v < graph.size(); ++v)
    for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k) {
      const VertexId u = graph.vertex(v).inputs[k];
      consumers_[u].push_back({v, k});
      edges_[v].push_back(nullptr);
      if (graph.vertex(u).is_input()) continue;
      const EdgeCosts*& edge = edge_index[{cand_[u], cand_[v], k}];
      if (!edge)
        edge = &distinct_edges_.emplace_back(graph.vertex(u).bound, cand_[u]->outputs, cand_[v]->operands[k], model);
      edges_[v][k] = edge;
    }
}

double Search::edge_cost(VertexId v, std::size_t k) const {
  if (!edges_[v][k]) return 0;
  return (*edges_[v][k])(output_of(graph_.vertex(v).inputs[k]), operand_of(v, k));
}

void Search::run_step(VertexId v, VertexId table_producer) {
  std::vector<Source> sources(graph_.vertex(v).inputs.size());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const VertexId u = graph_.vertex(v).inputs[k];
    if (!edges_[v][k]) continue;  // a graph input: free
    sources[k].costs = edges_[v][k];
    if (u == table_producer || table_producer == every_producer) {
      sources[k].table = &tables_[u];
    } else if (planned(u)) {
      sources[k].fixed = output_of(u);
    }
  }
  std::vector<FixedConsumer> consumers;
  for (const auto& [w, k] : consumers_[v])
    if (planned(w)) consumers.push_back({edges_[w][k], operand_of(w, k)});
  tables_[v] = step(*cand_[v], sources, consumers,
                    memory_.empty() ? Room{} : Room{&memory_[v], budget_, exchange_bytes_per_float(v)});
  considered_ += cand_[v]->d.size();
}

bool Search::fits() const {
  if (failed_) return false;
  if (memory_.empty()) return true;
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (cand_[v] && std::none_of(memory_[v].begin(), memory_[v].end(), [&](double m) { return m <= budget_; }))
      return false;
  return true;
}

double Search::exchange_bytes_per_float(VertexId v) const {
  return 2 * static_cast<double>(dtype_bytes(graph_.vertex(v).dtype)) / static_cast<double>(ranks_);
}

double Search::peak_bytes() const {
  double peak = 0;
  if (!memory_.empty())
    for (VertexId v = 0; v < graph_.size(); ++v)
      if (planned(v)) {
        double moved = cand_[v]->local[choice_[v]];
        for (std::size_t k = 0; k < graph_.vertex(v).inputs.size(); ++k)
          if (planned(graph_.vertex(v).inputs[k])) moved += edge_cost(v, k);
        peak = std::max(peak, memory_[v][choice_[v]] + exchange_bytes_per_float(v) * moved);
      }
  return peak;
}

void Search::back_track(VertexId v, int output) {
  if (!(tables_[v].cost[output] < infinity)) {  // no plan within the budget
    failed_ = true;
    return;
  }
  std::vector<std::pair<VertexId, int>> pending{{v, output}};
  while (!pending.empty()) {
    const auto [u, out] = pending.back();
    pending.pop_back();
    const int c = tables_[u].best[out];
    choice_[u] = c;
    const std::size_t arity = graph_.vertex(u).inputs.size();
    for (std::size_t k = 0; k < arity; ++k)
      if (const int entry = tables_[u].producer_output[c * arity + k]; entry >= 0)
        pending.push_back({graph_.vertex(u).inputs[k], entry});
  }
}

bool Search::optimize_path(const std::vector<VertexId>& path) {
  for (std::size_t i = 0; i < path.size(); ++i) run_step(path[i], i > 0 ? path[i - 1] : graph_.size());
  const bool before = failed_;
  failed_ = false;
  back_track(path.back(), tables_[path.back()].argmin());
  const bool planned = !failed_;
  failed_ = failed_ || before;
  return planned;
}

void Search::optimize_tree() {
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (!graph_.vertex(v).is_input()) run_step(v, every_producer);
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (!graph_.vertex(v).is_input() && consumers_[v].empty()) back_track(v, tables_[v].argmin());
}

void Search::optimize_greedily() {
  std::fill(choice_.begin(), choice_.end(), -1);
  failed_ = false;
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (!graph_.vertex(v).is_input()) optimize_path({v});
}

double Search::block_cost(const std::vector<VertexId>& block, const std::vector<bool>& in_block) const {
  double cost = 0;
  for (VertexId v : block) {
    cost += cand_[v]->local[choice_[v]];
    for (std::size_t k = 0; k < graph_.vertex(v).inputs.size(); ++k) cost += edge_cost(v, k);
    for (const auto& [w, k] : consumers_[v])
      if (!in_block[w] && planned(w)) cost += edge_cost(w, k);
  }
  return cost;
}

double Search::total_cost() const {
  double cost = 0;
  for (VertexId v = 0; v < graph_.size(); ++v) {
    if (!planned(v)) continue;
    cost += cand_[v]->local[choice_[v]];
    for (std::size_t k = 0; k < graph_.vertex(v).inputs.size(); ++k)
      if (planned(graph_.vertex(v).inputs[k])) cost += edge_cost(v, k);
  }
  return cost;
}

std::vector<PartitionVector> Search::partitions() const {
  std::vector<PartitionVector> plan(graph_.size());
  for (VertexId v = 0; v < graph_.size(); ++v)
    if (planned(v)) plan[v] = cand_[v]->d[choice_[v]];
  return plan;
}

void Search::set_partitions(const std::vector<PartitionVector>& plan) {
  for (VertexId v = 0; v < graph_.size(); ++v) {
    if (graph_.vertex(v).is_input()) continue;
    const auto& d = cand_[v]->d;
    const auto it = std::find(d.begin(), d.end(), plan.at(v));
    if (it == d.end())
      throw Error("partition vector " + plan[v].str() + " of '" + graph_.vertex(v).name + "' is not viable");
    choice_[v] = static_cast<int>(it - d.begin());
  }
}

}  // namespace einrel::partition::search
