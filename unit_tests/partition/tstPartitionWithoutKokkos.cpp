// partition/ is pure C++: built and linked here with einrel::partition alone (no Kokkos, no MPI, no test
// main that starts Kokkos), it must not even see Kokkos's headers, and it still plans.
#if __has_include(<Kokkos_Core.hpp>)
#error "einrel::partition carries Kokkos's include path: the planner must need no Kokkos"
#endif

#include <einrel_Baselines.hpp>
#include <einrel_Carried.hpp>
#include <einrel_CostModel.hpp>
#include <einrel_EinDecomp.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_LayerRoles.hpp>
#include <einrel_PartitionVector.hpp>
#include <einrel_PlanSearch.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Viable.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;

TEST(PartitionWithoutKokkos, EveryPlannerPlansAChain) {
  Graph g;
  g.output(builders::matrix_chain_program(g, 64, false, Dtype::f64));
  for (const std::string& planner : partition::planners_for(g)) {
    const partition::Plan plan = partition::make_plan(g, 8, planner);
    ASSERT_EQ(plan.partitions.size(), g.size()) << planner;
    EXPECT_GT(plan.total_cost, 0) << planner;
  }
}

}  // namespace
