#include <einrel_WeakSearch.hpp>

#include <algorithm>
#include <cstdint>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace einrel::redistribute::mesh::detail {

namespace {

// The weak graph (paper §5, §7.2) of an array of shape `global` on a mesh of `mesh_size` devices (prime axes
// whose reduction stays pending throughout excluded): calls f(next, step, cost) for every multi-axis
// collective (§7.1) from `t` whose local size stays within `height`.
template <class F>
void for_each_weak_edge(const std::vector<Extent>& global, Extent mesh_size, Extent height, const WeakType& t, F&& f) {
  const std::size_t r = global.size(), P = max_rank;  // t[P]: the pending product
  const Extent total = num_elements(global);
  auto local = [&](const WeakType& w, std::size_t i) { return global[i] / w[i]; };
  Extent used = t[P];
  for (std::size_t i = 0; i < r; ++i) used *= t[i];
  const Extent free = mesh_size / used, size = total / (used / t[P]);
  auto edge = [&](const WeakType& next, Collective op, std::vector<std::size_t> dims, Extent factor) {
    Extent parts = 1;
    for (std::size_t i = 0; i < r; ++i) parts *= next[i];
    const Extent after = total / parts;
    if (after <= height) f(next, WeakStep{op, std::move(dims), factor}, collective_cost(op, size, after));
  };
  auto divisors = [](Extent n) {  // those above 1
    std::vector<Extent> d;
    for (Extent k = 1; k * k <= n; ++k)
      if (n % k == 0) {
        if (k > 1) d.push_back(k);
        if (k * k != n) d.push_back(n / k);
      }
    return d;
  };
  for (std::size_t i = 0; i < r; ++i) {
    for (Extent k : divisors(t[i])) {
      const auto fk = static_cast<std::int32_t>(k);
      WeakType g = t;
      g[i] /= fk;
      edge(g, Collective::allgather, {i}, k);
      for (std::size_t j = 0; j < r; ++j)
        if (j != i && local(t, j) % k == 0) {
          WeakType a = g;
          a[j] *= fk;
          edge(a, Collective::alltoall, {i, j}, k);
        }
    }
    for (Extent k : divisors(free))
      if (local(t, i) % k == 0) {
        WeakType d = t;
        d[i] *= static_cast<std::int32_t>(k);
        edge(d, Collective::dynslice, {i}, k);
      }
    for (Extent k : divisors(t[P]))
      if (local(t, i) % k == 0) {
        WeakType rs = t;
        rs[i] *= static_cast<std::int32_t>(k);
        rs[P] /= static_cast<std::int32_t>(k);
        edge(rs, Collective::reducescatter, {i}, k);
      }
  }
  for (Extent k : divisors(t[P])) {
    WeakType a = t;
    a[P] /= static_cast<std::int32_t>(k);
    edge(a, Collective::allreduce, {}, k);
  }
}

}  // namespace

// The cheapest weak paths from `from` to `to` in the graph of for_each_weak_edge, in order of (cost, number
// of steps): Dijkstra where each type may be reached `per_type` times (the k shortest walks; 1: plain
// Dijkstra, paper §7.2), paths costing more than `bound` dropped, at most `paths` of them, and at most
// `work` labels made (then the paths found so far).
std::vector<WeakPath> weak_paths(const std::vector<Extent>& global, const WeakType& from, const WeakType& to,
                                 Extent mesh_size, Extent height, int per_type, std::size_t paths, Extent bound,
                                 std::size_t work) {
  struct Label {
    Extent cost, steps;
    WeakType type;
    std::size_t parent;
    WeakStep step;
  };
  std::vector<Label> labels{{0, 0, from, 0, {Collective::allpermute, {}, 1}}};
  std::unordered_map<WeakType, int, WeakTypeHash> settled;
  std::unordered_map<WeakType, std::pair<Extent, Extent>, WeakTypeHash> best;  // per_type == 1: the best label
  using Entry = std::tuple<Extent, Extent, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  queue.emplace(0, 0, 0);
  std::vector<WeakPath> out;
  while (!queue.empty() && out.size() < paths) {
    // Named copies, not structured bindings: C++17 lambdas (clang) cannot capture those.
    const Extent cost = std::get<0>(queue.top()), steps = std::get<1>(queue.top());
    const std::size_t index = std::get<2>(queue.top());
    queue.pop();
    const WeakType t = labels[index].type;
    int& times = settled[t];
    if (times >= per_type) continue;
    ++times;
    if (t == to) {
      WeakPath path{cost, {}};
      for (std::size_t k = index; k != 0; k = labels[k].parent) path.steps.push_back(labels[k].step);
      std::reverse(path.steps.begin(), path.steps.end());
      out.push_back(std::move(path));
      continue;
    }
    for_each_weak_edge(global, mesh_size, height, t, [&](const WeakType& next, WeakStep step, Extent step_cost) {
      const Extent c = cost + step_cost, s = steps + 1;
      if (c > bound || labels.size() >= work) return;
      const auto seen = settled.find(next);
      if (seen != settled.end() && seen->second >= per_type) return;
      if (per_type == 1) {  // plain Dijkstra: only an improving label
        const auto [it, fresh] = best.try_emplace(next, c, s);
        if (!fresh && it->second <= std::make_pair(c, s)) return;
        it->second = {c, s};
      }
      labels.push_back({c, s, next, index, std::move(step)});
      queue.emplace(c, s, labels.size() - 1);
    });
  }
  return out;
}

}  // namespace einrel::redistribute::mesh::detail
