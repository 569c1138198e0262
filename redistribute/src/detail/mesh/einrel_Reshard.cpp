#include <einrel_Error.hpp>
#include <einrel_MeshState.hpp>
#include <einrel_Reshard.hpp>
#include <einrel_WeakSearch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>

namespace einrel::redistribute::mesh {

std::string_view collective_name(Collective op) {
  switch (op) {
    case Collective::allgather:
      return "allgather";
    case Collective::alltoall:
      return "alltoall";
    case Collective::dynslice:
      return "dynslice";
    case Collective::allpermute:
      return "allpermute";
    case Collective::reducescatter:
      return "reducescatter";
    case Collective::allreduce:
      return "allreduce";
  }
  return "?";
}

Extent collective_cost(Collective op, Extent before, Extent after) {
  switch (op) {
    case Collective::allgather:
      return after;
    case Collective::dynslice:
      return 0;
    case Collective::allreduce:
      return 2 * before;
    default:
      return before;
  }
}

std::string steps_text(const ReshardPlan& plan) {
  std::string text;
  for (const ReshardStep& step : plan.steps) {
    std::string axes, dims;
    for (const std::string& a : user_axes(step.axes, plan.mesh)) axes += (axes.empty() ? "" : ",") + a;
    for (std::size_t d : step.dims) dims += (dims.empty() ? "" : "->") + std::to_string(d);
    text += (text.empty() ? "" : " ") + std::string(collective_name(step.op)) + "{" + axes + "}" +
            (dims.empty() ? "" : "(" + dims + ")");
  }
  return text;
}

Extent group_size(const ReshardStep& step, const DeviceMesh& primes) {
  Extent n = 1;
  for (const std::string& a : step.axes) n *= primes.axis_size(a);
  return n;
}

void advance(MeshState& state, const ReshardStep& step) {
  switch (step.op) {
    case Collective::allgather:
      state.allgather(step.dims[0], step.axes);
      break;
    case Collective::dynslice:
      state.dynslice(step.dims[0], step.axes);
      break;
    case Collective::alltoall:
      state.alltoall(step.dims[0], step.dims[1], step.axes);
      break;
    case Collective::reducescatter:
      state.reduce_scatter(step.dims[0], step.axes);
      break;
    case Collective::allreduce:
      state.allreduce(step.axes);
      break;
    case Collective::allpermute:
      state.permute_to(step.after);
      break;
  }
}

std::vector<std::string> user_axes(const std::vector<std::string>& prime_axes, const DeviceMesh& mesh) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < prime_axes.size();) {
    bool merged = false;
    for (const MeshAxis& a : mesh.axes()) {
      const std::vector<std::string> factors = mesh.prime_axes_of(a.name);
      if (factors.size() > 1 && k + factors.size() <= prime_axes.size() &&
          std::equal(factors.begin(), factors.end(), prime_axes.begin() + k)) {
        out.push_back(a.name);
        k += factors.size();
        merged = true;
        break;
      }
    }
    if (!merged) out.push_back(prime_axes[k++]);
  }
  return out;
}

namespace {

using detail::WeakPath;
using detail::WeakStep;
using detail::WeakType;

// The axes of `pool` whose sizes multiply to f: every such subset (pool order kept), at most `limit`.
std::vector<std::vector<std::string>> subsets_with_product(const std::vector<std::string>& pool,
                                                           const DeviceMesh& primes, Extent f, std::size_t limit) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> chosen;
  std::function<void(std::size_t, Extent)> walk = [&](std::size_t k, Extent rest) {
    if (out.size() >= limit) return;
    if (rest == 1) {
      out.push_back(chosen);
      return;
    }
    for (std::size_t m = k; m < pool.size(); ++m) {
      const int size = primes.axis_size(pool[m]);
      if (rest % size) continue;
      chosen.push_back(pool[m]);
      walk(m + 1, rest / size);
      chosen.pop_back();
    }
  };
  walk(0, f);
  // Repeated primes give the same multiset many ways; keep distinct sets only.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// How many of `list`'s major-most axes (its end) agree with `goal`'s: dimensions grow at their minor end.
std::size_t common_suffix(const std::vector<std::string>& list, const std::vector<std::string>& goal) {
  std::size_t n = 0;
  while (n < list.size() && n < goal.size() && list[list.size() - 1 - n] == goal[goal.size() - 1 - n]) ++n;
  return n;
}

// `axes` in the order they should be prepended to a dimension that should end as `goal`: axes of the goal
// in its order, others first (minor).
std::vector<std::string> goal_order(std::vector<std::string> axes, const std::vector<std::string>& goal) {
  auto rank_in_goal = [&](const std::string& a) {
    const auto it = std::find(goal.begin(), goal.end(), a);
    return it == goal.end() ? -1 : static_cast<int>(it - goal.begin());
  };
  std::stable_sort(axes.begin(), axes.end(),
                   [&](const std::string& a, const std::string& b) { return rank_in_goal(a) < rank_in_goal(b); });
  return axes;
}

struct Lowered {
  std::vector<ReshardStep> steps;
  MeshState state;
};

// Applies one concrete step to `state` and records it.
void apply(Lowered& low, Collective op, const std::vector<std::size_t>& dims, const std::vector<std::string>& axes,
           const DistType* target = nullptr) {
  MeshState& s = low.state;
  const Extent before = local_size(s.type(), s.mesh());
  ReshardStep step{op, axes, dims, target ? *target : DistType{}, {}, 0};
  advance(s, step);
  step.after = s.type();
  step.local_shape = local_shape(s.type(), s.mesh());
  step.cost = collective_cost(op, before, local_size(s.type(), s.mesh()));
  low.steps.push_back(std::move(step));
}

// Concrete axes for each weak step (paper §6.1, §7.3): candidates scored by how much of the target's axis
// order they leave in place, explored depth first until a choice ends on the target with no permutation;
// at most `budget` complete choices are tried. Returns the first choice that needs no permutation, else the
// first (best-scored) one.
class Lowering {
 public:
  Lowering(const std::vector<WeakStep>& weak, const DistType& target, const std::vector<std::string>& excluded)
      : weak_(weak), target_(target), excluded_(excluded) {}

  Lowered run(const MeshState& start) {
    Lowered low{{}, start};
    walk(low, 0);
    return found_ ? *found_ : *first_;
  }

 private:
  void walk(Lowered& low, std::size_t k) {
    if (found_ || leaves_ >= budget_) return;
    if (k == weak_.size()) {
      ++leaves_;
      if (!first_) first_ = low;
      if (low.state.holds(target_)) found_ = low;
      return;
    }
    for (const std::vector<std::string>& axes : candidates(low.state, weak_[k])) {
      Lowered next = low;
      apply(next, weak_[k].op, weak_[k].dims, axes);
      walk(next, k + 1);
      if (found_ || leaves_ >= budget_) return;
    }
  }

  std::vector<std::vector<std::string>> candidates(const MeshState& state, const WeakStep& w) const {
    const DistType& t = state.type();
    std::vector<std::string> pool;
    switch (w.op) {
      case Collective::allgather:
      case Collective::alltoall:
        pool = t.dims[w.dims[0]].axes;
        break;
      case Collective::dynslice: {
        std::set<std::string> busy(t.partial.begin(), t.partial.end());
        for (const DistDim& d : t.dims) busy.insert(d.axes.begin(), d.axes.end());
        for (const MeshAxis& a : state.mesh().axes())
          if (!busy.count(a.name)) pool.push_back(a.name);
        break;
      }
      default:
        for (const std::string& a : t.partial)
          if (std::find(excluded_.begin(), excluded_.end(), a) == excluded_.end()) pool.push_back(a);
    }
    std::vector<std::pair<long, std::vector<std::string>>> scored;
    for (std::vector<std::string> axes : subsets_with_product(pool, state.mesh(), w.factor, 64)) {
      DistType after = t;
      long score = 0;
      const std::size_t i = w.dims.empty() ? 0 : w.dims[0];
      auto goal = [&](std::size_t d) -> const std::vector<std::string>& { return target_.dims[d].axes; };
      auto remove = [&](std::vector<std::string>& list) {
        for (const std::string& a : axes) list.erase(std::find(list.begin(), list.end(), a));
      };
      auto prepend = [&](std::vector<std::string>& list) { list.insert(list.begin(), axes.begin(), axes.end()); };
      if (w.op == Collective::allgather || w.op == Collective::alltoall) {
        // moved in their current order: no renumbering when they already lead the dimension
        if (std::equal(axes.begin(), axes.end(), t.dims[i].axes.begin())) score += 1;
        remove(after.dims[i].axes);
        score += 4 * static_cast<long>(common_suffix(after.dims[i].axes, goal(i)));
      }
      if (w.op == Collective::alltoall || w.op == Collective::dynslice || w.op == Collective::reducescatter) {
        const std::size_t j = w.op == Collective::alltoall ? w.dims[1] : i;
        axes = goal_order(axes, goal(j));
        prepend(after.dims[j].axes);
        score += 4 * static_cast<long>(common_suffix(after.dims[j].axes, goal(j)));
        for (const std::string& a : axes)  // axes the target puts on this dimension
          if (std::find(goal(j).begin(), goal(j).end(), a) != goal(j).end()) score += 2;
      }
      scored.emplace_back(-score, axes);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::vector<std::string>> out;
    for (auto& s : scored) out.push_back(std::move(s.second));
    return out;
  }

  const std::vector<WeakStep>& weak_;
  const DistType& target_;
  const std::vector<std::string>& excluded_;
  std::size_t leaves_ = 0, budget_ = 256;
  std::optional<Lowered> found_, first_;
};

}  // namespace

namespace {

void check_problem(const DeviceMesh& mesh, const DistType& from, const DistType& to) {
  check_type(from, mesh);
  check_type(to, mesh);
  if (global_shape(from) != global_shape(to))
    throw Error("the source " + str(from, mesh) + " and the target " + str(to, mesh) +
                " are not the same global array");
  if (!to.partial.empty() && (std::set<std::string>(to.partial.begin(), to.partial.end()) !=
                                  std::set<std::string>(from.partial.begin(), from.partial.end()) ||
                              to.partial_op != from.partial_op))
    throw Error("the target " + str(to, mesh) +
                " has a pending reduction the source does not have: only a source's pending reduction can be "
                "kept or settled");
}

// Cost and memory height from the steps.
void add_up(ReshardPlan& plan) {
  plan.cost = 0;
  plan.memory_height = plan.source_local_size;
  for (const ReshardStep& s : plan.steps) {
    plan.cost += s.cost;
    plan.memory_height = std::max(plan.memory_height, num_elements(s.local_shape));
  }
}

// A plan of no steps yet for a checked problem.
ReshardPlan empty_plan(const DeviceMesh& mesh, const DistType& from, const DistType& to) {
  check_problem(mesh, from, to);
  ReshardPlan plan;
  plan.mesh = mesh;
  plan.primes = mesh.prime_factored();
  plan.from = from;
  plan.to = to;
  plan.source_local_size = local_size(from, mesh);
  plan.target_local_size = local_size(to, mesh);
  return plan;
}

// Concrete steps for a weak path (Lowering), and the one allpermute it may need: before the trailing
// allgathers where there are some (paper §7.3), to the type those allgathers turn into the target under the
// identity device map, gathering axes the target leaves free.
Lowered lower_path(const std::vector<WeakStep>& weak, const DistType& source, const DistType& target,
                   const std::vector<std::string>& excluded, const DeviceMesh& primes) {
  Lowered low = Lowering(weak, target, excluded).run(MeshState(primes, source));
  if (!low.state.holds(target)) {
    std::size_t k0 = weak.size();
    while (k0 > 0 && weak[k0 - 1].op == Collective::allgather) --k0;
    std::set<std::string> free;
    for (const MeshAxis& a : primes.axes()) free.insert(a.name);
    for (const DistDim& d : target.dims)
      for (const std::string& a : d.axes) free.erase(a);
    for (const std::string& a : target.partial) free.erase(a);
    DistType before_gathers = target;
    std::vector<std::vector<std::string>> gathered(weak.size());
    for (std::size_t k = weak.size(); k-- > k0;) {  // last gathered is the most major: prepend from the end
      for (Extent p : prime_factors(weak[k].factor)) {
        const auto it =
            std::find_if(free.begin(), free.end(), [&](const std::string& a) { return primes.axis_size(a) == p; });
        gathered[k].push_back(*it);
        free.erase(it);
      }
      std::vector<std::string>& list = before_gathers.dims[weak[k].dims[0]].axes;
      list.insert(list.begin(), gathered[k].begin(), gathered[k].end());
    }
    Lowered redo{{}, MeshState(primes, source)};  // the steps before the trailing allgathers again
    for (std::size_t k = 0; k < k0; ++k) apply(redo, low.steps[k].op, low.steps[k].dims, low.steps[k].axes);
    if (!redo.state.holds(before_gathers)) apply(redo, Collective::allpermute, {}, {}, &before_gathers);
    for (std::size_t k = k0; k < weak.size(); ++k) apply(redo, Collective::allgather, weak[k].dims, gathered[k]);
    if (!redo.state.holds(target)) throw Error("einrel::redistribute: the lowered sequence misses the target");
    low = std::move(redo);
  }
  return low;
}

Extent cost_of(const std::vector<ReshardStep>& steps) {
  Extent c = 0;
  for (const ReshardStep& s : steps) c += s.cost;
  return c;
}

}  // namespace

ReshardPlan naive_reshard(const DeviceMesh& mesh, const DistType& from, const DistType& to) {
  ReshardPlan plan = empty_plan(mesh, from, to);
  const DistType source = prime_factored(from, mesh), target = prime_factored(to, mesh);
  Lowered low{{}, MeshState(plan.primes, source)};
  std::vector<std::string> settle;
  for (const std::string& a : source.partial)
    if (std::find(target.partial.begin(), target.partial.end(), a) == target.partial.end()) settle.push_back(a);
  if (!settle.empty()) apply(low, Collective::allreduce, {}, settle);
  for (std::size_t i = 0; i < source.dims.size(); ++i)
    if (!source.dims[i].axes.empty()) apply(low, Collective::allgather, {i}, source.dims[i].axes);
  for (std::size_t i = 0; i < target.dims.size(); ++i)
    if (!target.dims[i].axes.empty()) apply(low, Collective::dynslice, {i}, target.dims[i].axes);
  plan.steps = std::move(low.steps);
  add_up(plan);
  return plan;
}

ReshardPlan synthesize_reshard(const DeviceMesh& mesh, const DistType& from, const DistType& to) {
  const auto start = std::chrono::steady_clock::now();
  ReshardPlan plan = empty_plan(mesh, from, to);
  const DistType source = prime_factored(from, mesh);
  DistType target = prime_factored(to, mesh);
  target.partial = source.partial;  // kept pending: the same axes, in the source's order
  if (to.partial.empty()) target.partial.clear();
  const std::vector<std::string> excluded = target.partial;
  Extent excluded_size = 1;
  for (const std::string& a : excluded) excluded_size *= plan.primes.axis_size(a);

  const Extent height = std::max(plan.source_local_size, plan.target_local_size);
  const std::vector<Extent> global = global_shape(source);
  auto pending_size = [&](const DistType& t) {
    Extent p = 1;
    for (const std::string& a : t.partial)
      if (std::find(excluded.begin(), excluded.end(), a) == excluded.end()) p *= plan.primes.axis_size(a);
    return p;
  };
  auto weak_type = [&](const DistType& t) {
    WeakType w{};
    w.fill(1);
    const std::vector<Extent> shape = local_shape(t, plan.primes);
    for (std::size_t i = 0; i < shape.size(); ++i) w[i] = static_cast<std::int32_t>(global[i] / shape[i]);
    w[max_rank] = static_cast<std::int32_t>(pending_size(t));
    return w;
  };
  const WeakType source_type = weak_type(source), target_type = weak_type(target);
  const Extent mesh_size = plan.primes.size() / excluded_size;
  auto lower = [&](const std::vector<WeakStep>& weak) {
    return lower_path(weak, source, target, excluded, plan.primes);
  };
  const std::vector<WeakPath> first =
      detail::weak_paths(global, source_type, target_type, mesh_size, height, 1, 1, std::numeric_limits<Extent>::max(),
                         std::numeric_limits<std::size_t>::max());
  if (first.empty()) throw Error("einrel::redistribute: no sequence of collectives reaches the target");
  Lowered low = lower(first[0].steps);
  Extent cost = cost_of(low.steps);
  // A permutation was needed: another weak path, of at most that much more, may lower without one.
  if (cost > first[0].cost)
    for (const WeakPath& path :
         detail::weak_paths(global, source_type, target_type, mesh_size, height, 2, 8, cost - 1, 30000)) {
      Lowered other = lower(path.steps);
      if (cost_of(other.steps) < cost) {
        cost = cost_of(other.steps);
        low = std::move(other);
      }
      if (cost == path.cost) break;  // no permutation: the paths after it cost as much or more
    }
  plan.steps = std::move(low.steps);
  add_up(plan);
  plan.naive_cost = naive_reshard(mesh, from, to).cost;
  plan.synthesis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace einrel::redistribute::mesh

namespace einrel::redistribute::mesh {

std::shared_ptr<const ReshardPlan> memoized_reshard(const DeviceMesh& mesh, const DistType& from, const DistType& to) {
  static std::mutex guard;
  static std::map<std::string, std::shared_ptr<const ReshardPlan>> plans;
  const std::string key = mesh.str() + " " + str(from, mesh) + " " + str(to, mesh);
  {
    const std::lock_guard<std::mutex> lock(guard);
    if (const auto it = plans.find(key); it != plans.end()) return it->second;
  }
  auto plan = std::make_shared<const ReshardPlan>(synthesize_reshard(mesh, from, to));  // outside the lock
  const std::lock_guard<std::mutex> lock(guard);
  if (plans.size() >= reshard_memo_size) plans.clear();
  return plans.emplace(key, std::move(plan)).first->second;
}

}  // namespace einrel::redistribute::mesh
