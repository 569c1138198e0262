#include <einrel_BlockPool.hpp>
#include <einrel_ReshardVolumes.hpp>

#include <algorithm>
#include <map>
#include <string>

namespace einrel::redistribute::mesh {

namespace {

// Per rank, whether the group of a collective over `axes` that holds it in `state` (after the step's
// bring_to_front, as step_group forms it) holds a rank of another node.
std::vector<char> groups_across_nodes(const MeshState& state, const std::vector<std::string>& axes,
                                      int ranks_per_node) {
  const int R = state.ranks();
  const std::vector<int> id = state.group_ids(axes);
  std::vector<int> first(static_cast<std::size_t>(R), R), last(static_cast<std::size_t>(R), -1);
  for (int r = 0; r < R; ++r) {
    const auto g = static_cast<std::size_t>(id[r]);
    first[g] = std::min(first[g], r / ranks_per_node), last[g] = std::max(last[g], r / ranks_per_node);
  }
  std::vector<char> across(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) across[r] = first[id[r]] != last[id[r]];
  return across;
}

// Walks `plan` as execute_reshard does, calling f(step, state before it) for every step.
template <class F>
void walk_steps(const ReshardPlan& plan, F&& f) {
  MeshState state(plan.primes, prime_factored(plan.from, plan.mesh));
  for (const ReshardStep& step : plan.steps) {
    if (step.op == Collective::allgather || step.op == Collective::alltoall)
      state.bring_to_front(step.dims[0], step.axes);
    f(step, state);
    advance(state, step);
  }
}

}  // namespace

ExchangeVolumes reshard_volumes(const ReshardPlan& plan, int ranks_per_node) {
  const int R = static_cast<int>(plan.primes.size());
  const auto n_off = static_cast<std::size_t>(ranks_per_node > 0 ? R : 0);
  std::vector<Extent> sent(R, 0), received(R, 0), sent_off(n_off, 0), received_off(n_off, 0);
  walk_steps(plan, [&](const ReshardStep& step, const MeshState& state) {
    const Extent tile = local_size(state.type(), plan.primes), n = group_size(step, plan.primes);
    Extent each = 0;  // what every member sends and receives in a collective step
    switch (step.op) {
      case Collective::allgather:
        each = (n - 1) * tile;
        break;
      case Collective::alltoall:
      case Collective::reducescatter:
        each = tile / n * (n - 1);
        break;
      case Collective::allreduce:
        each = 2 * (tile / n * (n - 1));
        break;
      case Collective::dynslice:
        break;
      case Collective::allpermute: {
        const std::vector<int> source = state.permutation_sources(step.after);
        for (int r = 0; r < R; ++r) {
          if (source[r] == r) continue;
          received[r] += tile, sent[source[r]] += tile;
          if (ranks_per_node > 0 && r / ranks_per_node != source[r] / ranks_per_node)
            received_off[r] += tile, sent_off[source[r]] += tile;
        }
        break;
      }
    }
    if (each == 0) return;
    for (int r = 0; r < R; ++r) sent[r] += each, received[r] += each;
    if (ranks_per_node <= 0) return;
    const std::vector<char> across = groups_across_nodes(state, step.axes, ranks_per_node);
    for (int r = 0; r < R; ++r)
      if (across[r]) sent_off[r] += each, received_off[r] += each;
  });
  return make_volumes(sent, received, sent_off, received_off);
}

std::vector<bool> steps_across_nodes(const ReshardPlan& plan, int ranks_per_node) {
  std::vector<bool> across;
  walk_steps(plan, [&](const ReshardStep& step, const MeshState& state) {
    bool any = false;
    if (step.op == Collective::allpermute) {
      const std::vector<int> source = state.permutation_sources(step.after);
      for (int r = 0; r < state.ranks() && !any; ++r) any = r / ranks_per_node != source[r] / ranks_per_node;
    } else if (step.op != Collective::dynslice) {
      for (char a : groups_across_nodes(state, step.axes, ranks_per_node)) any = any || a;
    }
    across.push_back(any);
  });
  return across;
}

std::vector<std::vector<Extent>> reshard_temporaries(const ReshardPlan& plan) {
  std::vector<std::vector<Extent>> steps;
  Extent before = plan.source_local_size;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const ReshardStep& step = plan.steps[s];
    const Extent after = num_elements(step.local_shape);
    std::vector<Extent>& live = steps.emplace_back();
    if (s > 0) live.push_back(before);
    if (s + 1 < plan.steps.size()) live.push_back(after);
    switch (step.op) {
      case Collective::allgather:
        live.push_back(after);
        break;
      case Collective::alltoall:
        live.insert(live.end(), {before, before});
        break;
      case Collective::reducescatter:
        live.push_back(before);
        break;
      default:
        break;
    }
    before = after;
  }
  return steps;
}

std::vector<Extent> reshard_scratch(const ReshardPlan& plan) {
  std::map<std::size_t, int> classes;
  for (const std::vector<Extent>& step : reshard_temporaries(plan)) {
    std::map<std::size_t, int> count;
    for (Extent n : step) ++count[BlockPool<Kokkos::HostSpace>::size_class(static_cast<std::size_t>(n))];
    for (const auto& [size, n] : count) classes[size] = std::max(classes[size], n);
  }
  std::vector<Extent> buffers;
  for (const auto& [size, n] : classes)
    buffers.insert(buffers.end(), static_cast<std::size_t>(n), static_cast<Extent>(size));
  return buffers;
}

}  // namespace einrel::redistribute::mesh
