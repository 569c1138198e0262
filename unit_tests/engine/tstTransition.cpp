// The engine's choice of how each operand moves (point-to-point exchange or synthesized collectives) and the
// deferral of reductions to a reader's collectives (Schedule, TransitionChooser), by the α–β model; pure.
#include <einrel_DryRun.hpp>
#include <einrel_Error.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Transition.hpp>

#include <gtest/gtest.h>

#include <numeric>

namespace {

using namespace einrel;
using engine::Schedule;
using engine::TransitionPath;
using engine::TransitionPolicy;
using partition::PartitionVector;

Extent total(const std::vector<Extent>& v) { return std::accumulate(v.begin(), v.end(), Extent{0}); }

// C = A·B with its inner label cut 4 ways on 4 ranks (every rank holds a partial C), read by an element-wise
// vertex cut 2×2: the reduction, deferred, is a reduce-scatter into the reader's tiles.
const char* const split_inner = R"(input A f64[64,256]
input B f64[256,64]
C = einsum("ij,jk->ik", A, B)
D = einsum("ik->ik", C, map=relu)
output D
)";

// S = tanh(B) cut 4 ways by rows and read whole by C = A·S, cut by i, on 4 ranks: one allgather by collectives.
const char* const gathered = R"(input A f64[64,64]
input B f64[64,64]
S = einsum("ij->ij", B, map=tanh)
C = einsum("ij,jk->ik", A, S)
output C
)";

std::vector<PartitionVector> gathered_plan() {
  return {{}, {}, PartitionVector("ij", {4, 1}), PartitionVector("ijk", {4, 1, 1})};
}

std::vector<PartitionVector> split_inner_plan() {
  return {{}, {}, PartitionVector("ijk", {1, 4, 1}), PartitionVector("ik", {2, 2})};
}

TEST(Transition, DeferredReductionIsAReduceScatterIntoTheReadersTiles) {
  const Graph g = parse_graph(split_inner, "split.ein");
  const VertexId C = *g.find("C"), D = *g.find("D");
  const Schedule p2p(g, split_inner_plan(), 4, TransitionPolicy::point_to_point);
  EXPECT_FALSE(p2p.deferred(C));
  EXPECT_EQ(p2p.transition(D, 0).path, TransitionPath::point_to_point);
  for (TransitionPolicy policy : {TransitionPolicy::collectives, TransitionPolicy::automatic}) {
    SCOPED_TRACE(std::string(engine::transition_policy_name(policy)));
    const Schedule s(g, split_inner_plan(), 4, policy);
    ASSERT_TRUE(s.deferred(C));
    EXPECT_EQ(s.layout(C), s.vertex(C).partial_layout());  // every rank keeps its partial block
    const engine::Transition& t = s.transition(D, 0);
    ASSERT_EQ(t.path, TransitionPath::collectives);
    ASSERT_FALSE(t.plan->steps.empty());
    EXPECT_EQ(t.plan->steps[0].op, redistribute::mesh::Collective::reducescatter)
        << redistribute::mesh::steps_text(*t.plan);
    // the partials' reduction moves nothing at C; D's transition what its collectives exchange, in all less
    // than reducing 3 partials of 64×64 on the owner and cutting the result 2×2 (the paper's cost prefers a
    // reduce-scatter over both axes and an alltoall to two reduce-scatters: 5120 against 6144)
    const engine::Traffic dry = engine::dry_run(g, s), dry_p2p = engine::dry_run(g, p2p);
    EXPECT_EQ(dry.floats_moved[C], 0);
    EXPECT_EQ(dry.floats_moved[D], t.volumes.sent.sum()) << redistribute::mesh::steps_text(*t.plan);
    EXPECT_EQ(redistribute::mesh::steps_text(*t.plan), "reducescatter{r.0,r.1}(0) alltoall{r.0}(0->1)");
    EXPECT_LT(total(dry.floats_moved), total(dry_p2p.floats_moved));
  }
}

// P = A·B and Q = C·D, both with the inner label cut 4 ways, added element-wise (or combined by max, with
// max aggregations), then read by relu cut 2×2.
std::string two_partials(const std::string& agg, const std::string& join) {
  return "input A f64[64,256]\ninput B f64[256,64]\ninput C f64[64,128]\ninput D f64[128,64]\n"
         "P = einsum(\"ij,jk->ik\", A, B, agg=" +
         agg + ")\nQ = einsum(\"ij,jk->ik\", C, D, agg=" + agg + ")\nY = einsum(\"ik,ik->ik\", P, Q, join=" + join +
         ")\nW = einsum(\"ik->ik\", Y, map=relu)\noutput W\n";
}

std::vector<PartitionVector> two_partials_plan() {
  return {{},
          {},
          {},
          {},
          PartitionVector("ijk", {1, 4, 1}),
          PartitionVector("ijk", {1, 4, 1}),
          PartitionVector("ik", {2, 2}),
          PartitionVector("ik", {2, 2})};
}

// The element-wise combination of two partial results stays partial: it runs on the partial blocks where they
// lie, and one reduce-scatter in its reader's transition replaces the two reductions.
TEST(Transition, PartialResultsCombineBeforeOneReduction) {
  for (const auto& [agg, join] : {std::pair{"sum", "add"}, std::pair{"max", "max"}}) {
    const Graph g = parse_graph(two_partials(agg, join), "two.ein");
    const VertexId P = *g.find("P"), Q = *g.find("Q"), Y = *g.find("Y"), W = *g.find("W");
    for (TransitionPolicy policy : {TransitionPolicy::collectives, TransitionPolicy::automatic}) {
      SCOPED_TRACE(std::string(agg) + " " + std::string(engine::transition_policy_name(policy)));
      const Schedule s(g, two_partials_plan(), 4, policy);
      ASSERT_TRUE(s.on_partials(Y));
      EXPECT_TRUE(s.deferred(P) && s.deferred(Q) && s.deferred(Y));
      EXPECT_EQ(s.layout(Y), s.vertex(P).partial_layout());
      EXPECT_EQ(s.vertex(Y).tuples_of(2), std::vector<Extent>{0});  // the one block, on every rank
      const engine::Transition& t = s.transition(W, 0);
      ASSERT_EQ(t.path, TransitionPath::collectives);
      EXPECT_EQ(t.plan->steps[0].op, redistribute::mesh::Collective::reducescatter)
          << redistribute::mesh::steps_text(*t.plan);
      const engine::Traffic dry = engine::dry_run(g, s);
      EXPECT_EQ(dry.floats_moved[P] + dry.floats_moved[Q] + dry.floats_moved[Y], 0);
      EXPECT_EQ(dry.floats_moved[W], t.volumes.sent.sum());
      EXPECT_EQ(dry.ranks[1].tuples, 4);  // one tuple each of P, Q, Y (its one partial block) and W
      const Schedule apart(g, two_partials_plan(), 4, TransitionPolicy::point_to_point);
      EXPECT_FALSE(apart.on_partials(Y));
      EXPECT_LT(total(dry.floats_moved), total(engine::dry_run(g, apart).floats_moved));
    }
  }
  // a join other than the pending ⊕, or partials laid out differently, combine nothing
  const Graph sub = parse_graph(two_partials("sum", "sub"), "sub.ein");
  EXPECT_FALSE(Schedule(sub, two_partials_plan(), 4, TransitionPolicy::collectives).on_partials(*sub.find("Y")));
  std::vector<PartitionVector> other = two_partials_plan();
  other[5] = PartitionVector("ijk", {2, 2, 1});
  const Graph g = parse_graph(two_partials("sum", "add"), "two.ein");
  EXPECT_FALSE(Schedule(g, other, 4, TransitionPolicy::collectives).on_partials(*g.find("Y")));
}

// A replicating transition (every rank needs all of B, cut 4 ways by its producer) is one allgather by
// collectives: the same bytes as the point-to-point exchange and 2 stages instead of 3 messages, so the
// automatic choice takes it; the point-to-point policy keeps the exchange.
TEST(Transition, AutomaticChoiceFollowsTheModel) {
  const Graph g = parse_graph(gathered, "rep.ein");
  const std::vector<PartitionVector> plan = gathered_plan();
  const VertexId C = *g.find("C");
  const Schedule automatic(g, plan, 4);
  const engine::Transition& t = automatic.transition(C, 1);
  ASSERT_EQ(t.path, TransitionPath::collectives);
  ASSERT_EQ(t.plan->steps.size(), 1u) << redistribute::mesh::steps_text(*t.plan);
  EXPECT_EQ(t.plan->steps[0].op, redistribute::mesh::Collective::allgather);
  const engine::MachineModel model;
  const auto p2p_volumes =
      redistribute::exchange_volumes(automatic.layout(*g.find("S")), automatic.vertex(C).operand_layout(1));
  EXPECT_EQ(t.volumes.sent, p2p_volumes.sent);
  EXPECT_LE(t.seconds, engine::point_to_point_seconds(automatic.layout(*g.find("S")),
                                                      automatic.vertex(C).operand_layout(1), p2p_volumes, 8, model));
  // a model where messages cost nothing and bytes everything still takes the collectives (equal bytes)
  EXPECT_EQ(Schedule(g, plan, 4, TransitionPolicy::automatic, {0, 1e-9}).transition(C, 1).path,
            TransitionPath::collectives);
  EXPECT_EQ(Schedule(g, plan, 4, TransitionPolicy::point_to_point).transition(C, 1).path,
            TransitionPath::point_to_point);
  // on one rank nothing moves and nothing is synthesized
  EXPECT_EQ(Schedule(g, {{}, {}, PartitionVector("ij", {1, 1}), PartitionVector("ijk", {1, 1, 1})}, 1,
                     TransitionPolicy::collectives)
                .transition(C, 1)
                .path,
            TransitionPath::point_to_point);
}

// One agreement on failure is ceil(log2 R) rounds of one message, the first ceil(log2 ranks_per_node) of them
// within a node on a two-level machine.
TEST(Transition, AnAgreementTakesLogRoundsOfLatency) {
  engine::MachineModel m;
  m.latency_seconds = 1e-5, m.node_latency_seconds = 1e-6;
  EXPECT_EQ(m.agreement_seconds(1), 0);
  EXPECT_DOUBLE_EQ(m.agreement_seconds(2), 1e-5);
  EXPECT_DOUBLE_EQ(m.agreement_seconds(4), 2e-5);
  EXPECT_DOUBLE_EQ(m.agreement_seconds(5), 3e-5);
  EXPECT_DOUBLE_EQ(m.agreement_seconds(65536), 16e-5);
  m.ranks_per_node = 4;  // two levels: 2 rounds within a node, the rest across
  EXPECT_DOUBLE_EQ(m.agreement_seconds(16), 2e-6 + 2e-5);
  EXPECT_DOUBLE_EQ(m.agreement_seconds(3), 2e-6);
  m.ranks_per_node = 1;
  EXPECT_DOUBLE_EQ(m.agreement_seconds(16), 4e-5);
}

// An execution agrees once for its checks, once per EinSum vertex, once at the end and once per step of each
// collective sequence: the dry run counts them and prices them beside its estimate.
TEST(Transition, AgreementsOnFailureAreCountedBesideTheEstimate) {
  const Graph g = parse_graph(gathered, "agree.ein");
  const std::vector<PartitionVector> plan = gathered_plan();
  const VertexId C = *g.find("C");
  engine::MachineModel model;
  for (TransitionPolicy policy : {TransitionPolicy::collectives, TransitionPolicy::point_to_point}) {
    const Schedule s(g, plan, 4, policy, model);
    const engine::Transition& t = s.transition(C, 1);
    const Extent steps = t.plan ? static_cast<Extent>(t.plan->steps.size()) : 0;
    EXPECT_EQ(steps > 0, policy == TransitionPolicy::collectives);
    // the checks, S and C placed, the end; the steps
    const Extent n = 1 + 2 + 1 + steps;
    EXPECT_EQ(engine::failure_agreements(g, s), n);
    const engine::Traffic traffic = engine::dry_run(g, s);
    EXPECT_EQ(traffic.failure_agreements, n);
    EXPECT_DOUBLE_EQ(traffic.agreement_seconds, static_cast<double>(n) * model.agreement_seconds(4));
    // their price follows the latency
    engine::MachineModel slow = model;
    slow.latency_seconds = slow.node_latency_seconds = 10 * model.latency_seconds;
    const Schedule again(g, plan, 4, policy, slow);
    EXPECT_DOUBLE_EQ(engine::dry_run(g, again).agreement_seconds, 10 * traffic.agreement_seconds);
  }
  // j cut: C's partials move, and its kernels' failures still wait for the agreement at the end (the failed rank
  // stands in for its messages)
  std::vector<PartitionVector> split = plan;
  split[3] = PartitionVector("ijk", {1, 4, 1});
  const Schedule s(g, split, 4, TransitionPolicy::point_to_point, model);
  EXPECT_EQ(s.vertex(C).group_size(), 4);
  EXPECT_EQ(engine::failure_agreements(g, s), 1 + 2 + 1);
}

// Layouts that are no distributed type (several blocks on a rank, idle ranks, uneven tiles) move point to
// point whatever the policy; a graph output's reduction is never deferred.
TEST(Transition, LayoutsThatAreNoTypesMovePointToPoint) {
  const Graph g = parse_graph(R"(input A f64[30,40]
input B f64[40,24]
C = einsum("ij,jk->ik", A, B)
D = einsum("ik->ik", C, map=relu)
output C, D
)",
                              "uneven.ein");
  const VertexId C = *g.find("C"), D = *g.find("D");
  const Schedule s(g, {{}, {}, PartitionVector("ijk", {1, 4, 1}), PartitionVector("ik", {4, 4})}, 4,
                   TransitionPolicy::collectives);
  EXPECT_FALSE(s.deferred(C));                                         // an output
  EXPECT_EQ(s.transition(D, 0).path, TransitionPath::point_to_point);  // 4 blocks a rank
  const Schedule uneven(g, {{}, {}, PartitionVector("ijk", {4, 1, 1}), PartitionVector("ik", {1, 4})}, 4,
                        TransitionPolicy::collectives);
  EXPECT_EQ(uneven.transition(D, 0).path, TransitionPath::point_to_point);  // 30 rows in 4 tiles
}

TEST(Transition, PolicyNames) {
  for (TransitionPolicy p :
       {TransitionPolicy::automatic, TransitionPolicy::point_to_point, TransitionPolicy::collectives})
    EXPECT_EQ(engine::parse_transition_policy(std::string(engine::transition_policy_name(p))), p);
  try {
    engine::parse_transition_policy("fast");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown transition policy 'fast' (expected auto, point-to-point or collectives)");
  }
}

// The chooser remembers its choices by the layouts' contents: asked again, or for equal layouts built anew, it
// answers what a fresh chooser answers.
TEST(Transition, ChoicesAreRememberedByLayout) {
  using redistribute::BlockLayout;
  auto layout = [](Bound bound, std::vector<Extent> parts) {
    return std::make_shared<const BlockLayout>(BlockGrid(std::move(bound), std::move(parts)), 4);
  };
  const std::vector<std::pair<std::shared_ptr<const BlockLayout>, std::shared_ptr<const BlockLayout>>> pairs{
      {layout({64, 64}, {4, 1}), layout({64, 64}, {1, 4})},
      {layout({64, 64}, {2, 2}), layout({64, 64}, {4, 1})},
      {layout({64, 64}, {4, 1}), layout({64, 64}, {4, 1})}};
  for (TransitionPolicy policy : {TransitionPolicy::automatic, TransitionPolicy::collectives}) {
    engine::TransitionChooser remembering(4, policy, engine::MachineModel{});
    for (int round = 0; round < 2; ++round)
      for (const auto& [from, to] : pairs) {
        engine::TransitionChooser fresh(4, policy, engine::MachineModel{});
        const auto from_again = std::make_shared<const BlockLayout>(from->grid(), from->placement()),
                   to_again = std::make_shared<const BlockLayout>(to->grid(), to->placement());
        const engine::Transition &a = *remembering.choose(from_again, to_again, 8), &b = *fresh.choose(from, to, 8);
        EXPECT_EQ(a.path, b.path);
        EXPECT_EQ(a.volumes.sent, b.volumes.sent);
        EXPECT_EQ(a.volumes.received, b.volumes.received);
        EXPECT_EQ(a.seconds, b.seconds);
        if (a.path == TransitionPath::collectives) {
          for (int r = 0; r < 4; ++r) EXPECT_EQ(engine::collective_tiles(a, r), engine::collective_tiles(b, r));
        }
        EXPECT_EQ(a.scratch, b.scratch);
        EXPECT_EQ(remembering.choose(from, to, 8), remembering.choose(from_again, to_again, 8));  // one object
        const auto pa = remembering.from_partials(from, AggOp::sum, to, 8),
                   pb = fresh.from_partials(from, AggOp::sum, to, 8);
        ASSERT_EQ(pa != nullptr, pb != nullptr);
        if (pa) {
          EXPECT_EQ(pa->seconds, pb->seconds);
        }
      }
  }
}

// Layouts are numbered by content, whichever object carries them, and a numbered layout stays alive: a layout
// made after the first is dropped may take its address, and still gets its own number.
TEST(Transition, LayoutsAreNumberedByContent) {
  using redistribute::BlockLayout;
  engine::LayoutNumbers numbers;
  auto first = std::make_shared<const BlockLayout>(BlockGrid({8, 6}, {2, 3}), 3);
  const std::size_t n = numbers.number(first);
  EXPECT_EQ(numbers.number(first), n);
  EXPECT_EQ(numbers.number(
                std::make_shared<const BlockLayout>(BlockGrid({8, 6}, {2, 3}), redistribute::Placement::spread(6, 3))),
            n);
  first.reset();
  for (int round = 0; round < 8; ++round) {
    const auto other =
        std::make_shared<const BlockLayout>(BlockGrid({8, 6}, {2, 3}), redistribute::Placement::replicated(6, 3));
    EXPECT_NE(numbers.number(other), n);
  }
  EXPECT_EQ(numbers.number(std::make_shared<const BlockLayout>(BlockGrid({8, 6}, {2, 3}), 3)), n);
}

}  // namespace
