// The two-level machine model (docs/planner.md "Nodes"): messages between ranks of one node priced at the
// node's rates, the rest at the network's, in every way the engine prices a move (point-to-point exchanges,
// synthesized collectives, reductions); and the planner's choice under it. Pure: the node map is simulated.
#include <einrel_DryRun.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_ReshardVolumes.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Transition.hpp>

#include <gtest/gtest.h>

#include <iostream>

namespace {

using namespace einrel;
using engine::MachineModel;
using engine::Schedule;
using engine::TransitionPolicy;
using redistribute::BlockLayout;
using redistribute::Placement;

// A slow network between nodes of `ranks_per_node` ranks, fast links within them.
MachineModel two_levels(int ranks_per_node) {
  MachineModel m;
  m.latency_seconds = 1e-5, m.seconds_per_byte = 1e-8;
  m.node_latency_seconds = 1e-6, m.node_seconds_per_byte = 1e-10;
  m.ranks_per_node = ranks_per_node;
  return m;
}

// Four blocks of 2 elements on ranks 0-3, moved so that block b goes to rank `to[b]`: each target block
// gathers one message of 16 bytes.
double exchange_seconds(const std::vector<int>& to, const MachineModel& model) {
  const auto from = std::make_shared<const BlockLayout>(BlockGrid({8}, {4}), Placement::owners({0, 1, 2, 3}, 4));
  const auto target = std::make_shared<const BlockLayout>(BlockGrid({8}, {4}), Placement::owners(to, 4));
  engine::TransitionChooser chooser(4, TransitionPolicy::point_to_point, model);
  return chooser.choose(from, target, 8)->seconds;
}

TEST(Nodes, ExchangesWithinANodeAtTheNodesRates) {
  const MachineModel m = two_levels(2);
  // every block to the other rank of its node; then to the other node
  EXPECT_DOUBLE_EQ(exchange_seconds({1, 0, 3, 2}, m), 1e-6 + 16 * 1e-10);
  EXPECT_DOUBLE_EQ(exchange_seconds({2, 3, 0, 1}, m), 1e-5 + 16 * 1e-8);
  // one block off its node (2 to rank 0): rank 0, the busiest, receives 16 bytes on its node and 16 from the
  // other; the first block's message stays on its node
  EXPECT_DOUBLE_EQ(exchange_seconds({1, 0, 0, 2}, m), 1e-6 + 16 * 1e-10 + 16 * 1e-8);
  // without a node map, or with the node's rates the network's, one level: the network's rates throughout
  MachineModel unknown = m;
  unknown.ranks_per_node = 0;
  EXPECT_FALSE(unknown.two_level());
  EXPECT_DOUBLE_EQ(exchange_seconds({1, 0, 3, 2}, unknown), 1e-5 + 16 * 1e-8);
  MachineModel flat = m;
  flat.node_latency_seconds = flat.latency_seconds, flat.node_seconds_per_byte = flat.seconds_per_byte;
  EXPECT_EQ(exchange_seconds({1, 0, 3, 2}, flat), exchange_seconds({2, 3, 0, 1}, flat));
  // one node of all ranks: everything at the node's rates
  EXPECT_DOUBLE_EQ(exchange_seconds({2, 3, 0, 1}, two_levels(4)), 1e-6 + 16 * 1e-10);
}

// On the rank mesh of 4 ranks (r.0 minor), an allgather over r.0 joins ranks 0-1 and 2-3 (one node each of
// 2), one over r.1 ranks 0-2 and 1-3 (two nodes).
TEST(Nodes, CollectivesPricedByTheNodesTheirGroupsSpan) {
  const Graph g = parse_graph(R"(input A f64[64,64]
input B f64[64,64]
S = einsum("ij->ij", B, map=tanh)
C = einsum("ij,jk->ik", A, S)
output C
)",
                              "nodes.ein");
  const VertexId C = *g.find("C");
  using partition::PartitionVector;
  // S cut 4 ways by rows and read whole by C (cut by i): one allgather over both axes of the mesh
  const std::vector<PartitionVector> plan{{}, {}, PartitionVector("ij", {4, 1}), PartitionVector("ijk", {4, 1, 1})};
  const MachineModel m = two_levels(2);
  const Schedule flat_schedule(g, plan, 4, TransitionPolicy::collectives),
      two_schedule(g, plan, 4, TransitionPolicy::collectives, m);
  const engine::Transition &flat = flat_schedule.transition(C, 1), &two = two_schedule.transition(C, 1);
  ASSERT_TRUE(two.plan);
  EXPECT_EQ(two.volumes.sent, flat.volumes.sent);
  ASSERT_EQ(two.volumes.sent_off_node.size(), 4u);
  const std::vector<bool> across = redistribute::mesh::steps_across_nodes(*two.plan, 2);
  ASSERT_EQ(across.size(), two.plan->steps.size());
  // the group of all 4 ranks spans both nodes: every rank's bytes are priced at the network's rate
  EXPECT_TRUE(across[0]);
  EXPECT_EQ(two.volumes.sent_off_node, two.volumes.sent);
  // one node of all 4: the same steps at the node's rates, nothing off-node
  const Schedule one_node(g, plan, 4, TransitionPolicy::collectives, two_levels(4)),
      own_nodes(g, plan, 4, TransitionPolicy::collectives, two_levels(1));
  const engine::Transition& one = one_node.transition(C, 1);
  EXPECT_EQ(one.volumes.sent_off_node.all(), std::vector<Extent>(4, 0));
  EXPECT_LT(one.seconds, two.seconds);
  // a rank a node (one level: ranks_per_node 1) prices all at the network's rates, as nodes of 2 do here
  EXPECT_DOUBLE_EQ(two.seconds, own_nodes.transition(C, 1).seconds);
}

// Under a two-level machine the planner's choice is no slower, by that machine, than the plan it makes when
// every message costs the network's rates, priced on the two-level machine; on some graphs it is faster:
// it keeps heavy exchanges within nodes.
TEST(Nodes, PlannerPrefersExchangesWithinNodes) {
  const std::vector<const char*> graphs = {
      R"(input A f64[512,512]
input B f64[512,512]
input D f64[512,512]
C = einsum("ij,jk->ik", A, B)
E = einsum("ik,kl->il", C, D)
output E
)",
      R"(input X f64[256,1024]
input W1 f64[1024,2048]
input W2 f64[2048,1024]
H = einsum("bi,ih->bh", X, W1)
R = einsum("bh->bh", H, map=relu)
Y = einsum("bh,ho->bo", R, W2)
output Y
)",
      R"(input A f64[128,4096]
input B f64[4096,128]
input C f64[128,128]
P = einsum("ij,jk->ik", A, B)
Q = einsum("ik,kl->il", P, C)
T = einsum("il->li", Q, map=exp)
output T
)"};
  int faster = 0, cases = 0;
  for (const char* text : graphs)
    for (int R : {8, 16})
      for (int per_node : {2, 4}) {
        const Graph g = parse_graph(text, "nodes.ein");
        engine::Options two;
        two.machine = two_levels(per_node);
        two.plan_order = false;
        engine::Options flat = two;
        flat.machine.node_latency_seconds = flat.machine.latency_seconds;
        flat.machine.node_seconds_per_byte = flat.machine.seconds_per_byte;
        const engine::FittedPlan chosen = engine::choose_plan(g, R, two), network = engine::choose_plan(g, R, flat);
        const Schedule repriced(g, network.schedule.partitions(), R, two.transitions, two.scheduling_model());
        const double other = engine::dry_run(g, repriced).estimated_seconds();
        EXPECT_LE(chosen.estimated_seconds(), other * (1 + 1e-12)) << text << " R = " << R << " nodes of " << per_node;
        faster += chosen.estimated_seconds() < other * (1 - 1e-9);
        ++cases;
      }
  std::cout << "faster under two levels than the one-level plan: " << faster << " of " << cases << "\n";
  EXPECT_GT(faster, 0) << "of " << cases;
}

}  // namespace
