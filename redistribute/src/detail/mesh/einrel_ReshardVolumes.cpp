#include <einrel_BlockPool.hpp>
#include <einrel_ReshardVolumes.hpp>

#include <algorithm>
#include <map>

namespace einrel::redistribute::mesh {

ExchangeVolumes reshard_volumes(const ReshardPlan& plan) {
  MeshState state(plan.primes, prime_factored(plan.from, plan.mesh));
  const int R = state.ranks();
  ExchangeVolumes v{std::vector<Extent>(R, 0), std::vector<Extent>(R, 0)};
  auto everyone = [&](Extent n) {
    for (int r = 0; r < R; ++r) v.sent[r] += n, v.received[r] += n;
  };
  for (const ReshardStep& step : plan.steps) {
    const Extent tile = local_size(state.type(), plan.primes), n = group_size(step, plan.primes);
    switch (step.op) {
      case Collective::allgather:
        everyone((n - 1) * tile);
        break;
      case Collective::alltoall:
      case Collective::reducescatter:
        everyone(tile / n * (n - 1));
        break;
      case Collective::allreduce:
        everyone(2 * (tile / n * (n - 1)));
        break;
      case Collective::dynslice:
        break;
      case Collective::allpermute: {
        const std::vector<int> source = state.permutation_sources(step.after);
        for (int r = 0; r < R; ++r)
          if (source[r] != r) v.received[r] += tile, v.sent[source[r]] += tile;
        break;
      }
    }
    advance(state, step);
  }
  return v;
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
