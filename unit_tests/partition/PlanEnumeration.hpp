#ifndef EINREL_TEST_PLANENUMERATION_HPP
#define EINREL_TEST_PLANENUMERATION_HPP

// The planner tests' exhaustive search: every combination of viable partition vectors.
#include <einrel_Graph.hpp>
#include <einrel_Viable.hpp>

#include <cstddef>
#include <vector>

namespace einrel::test {

// Calls visit(plan) for every combination of viable(v, p) over the EinSum vertices of `g` (plan[v] empty for
// inputs); visits nothing and returns false where there are more than `limit` combinations.
template <class Visit>
bool for_each_plan(const Graph& g, Extent p, std::size_t limit, Visit&& visit) {
  std::vector<VertexId> einsums;
  std::vector<std::vector<partition::PartitionVector>> choices;
  std::size_t combinations = 1;
  for (VertexId v = 0; v < g.size(); ++v)
    if (!g.vertex(v).is_input()) {
      einsums.push_back(v);
      choices.push_back(partition::viable(g.resolved(v), p));
      combinations *= choices.back().size();
      if (combinations > limit) return false;
    }
  std::vector<partition::PartitionVector> plan(g.size());
  std::vector<std::size_t> at(einsums.size(), 0);
  for (std::size_t n = 0; n < combinations; ++n) {
    for (std::size_t k = 0; k < einsums.size(); ++k) plan[einsums[k]] = choices[k][at[k]];
    visit(plan);
    for (std::size_t k = 0; k < at.size() && ++at[k] == choices[k].size(); ++k) at[k] = 0;
  }
  return true;
}

}  // namespace einrel::test

#endif
