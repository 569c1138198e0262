// The per-rank step list (engine::rank_steps) is the one model of what a rank does: the dry run counts it,
// execute runs it (at 1-7 ranks here; the engine test adds 8). Here, over random graphs and plans, planned chains and a
// transformer layer, every planner and transition policy: the dry run's per-rank floats sent and received, peak block
// bytes and kernel calls, and its per-vertex floats moved, equal what execute measures, exactly; and the steps agree
// across ranks (every partial sent is received, every join tuple runs once) for R = 1..8 without MPI.
#include <einrel_DryRun.hpp>
#include <einrel_Engine.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_Planner.hpp>
#include <einrel_RankSteps.hpp>
#include <einrel_ShapeAligned.hpp>
#include <einrel_TestDryRun.hpp>
#include <einrel_TestEngine.hpp>
#include <einrel_TestGraphs.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

namespace {

using namespace einrel;
using comm::Communicator;
using partition::PartitionVector;
// The step list is backend-independent: checked on the host's default execution space, one thread per rank.
using Exec = Kokkos::DefaultHostExecutionSpace;
using Mem = Exec::memory_space;
using Values = std::vector<std::optional<engine::AnyDistributed<Mem>>>;

// This rank's blocks of every input in the schedule's layout, filled with a constant (the figures compared
// here do not depend on the values).
Values constant_inputs(const Communicator& comm, const Graph& g, const engine::Schedule& schedule) {
  Values inputs(g.size());
  for (VertexId v = 0; v < g.size(); ++v) {
    if (!g.vertex(v).is_input()) continue;
    dispatch_dtype(g.vertex(v).dtype, [&](auto scalar) {
      using S = decltype(scalar);
      auto d = redistribute::DistributedTensorRelation<S, Mem>::allocate("input", comm, schedule.layout(v));
      for (const auto& [key, block] : d.local()) Kokkos::deep_copy(block.view(), S(0.5));
      inputs[v] = std::move(d);
    });
  }
  Kokkos::fence();
  return inputs;
}

// With InputReads::again, re-reading an input costs nothing in the model, so every consumer that would move
// an input in another layout reads it again; the reader fills the constant of constant_inputs.
void expect_dry_run_is_execute(const Communicator& comm, const Graph& g, const std::vector<PartitionVector>& plan,
                               engine::TransitionPolicy policy, engine::InputReads reads = engine::InputReads::move) {
  engine::MachineModel model;
  model.file_seconds_per_byte = 0;
  const engine::Schedule schedule(g, plan, comm.size(), policy, model, {}, reads);
  const engine::InputReader<Mem> read = [](VertexId, const engine::AnyBoxedBlocks<Mem>& blocks, engine::ReadCall) {
    std::visit(
        [](const auto& boxed) {
          for (const auto& [box, block] : boxed) Kokkos::deep_copy(block.view(), 0.5);
        },
        blocks);
  };
  const auto result = test::execute_once(Exec{}, comm, g, schedule, constant_inputs(comm, g, schedule), {}, read);
  test::expect_dry_run_matches(comm, g, schedule, result);
}

constexpr engine::TransitionPolicy policies[] = {engine::TransitionPolicy::automatic,
                                                 engine::TransitionPolicy::point_to_point,
                                                 engine::TransitionPolicy::collectives};

// From 3 ranks on, the job oversubscribes a 2-core CI runner and every message costs a time slice: fewer
// cases there, the same checks. (The engine test runs its random graphs at 1-5 and 8 ranks with the
// same dry-run check, test::expect_dry_run_matches.)
bool oversubscribed(const Communicator& comm) { return comm.size() > 2; }
int trials_at(const Communicator& comm) { return oversubscribed(comm) ? 3 : 8; }

TEST(StepList, DryRunIsWhatExecuteMeasuresOnRandomGraphs) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 gen(41);
  for (int trial = 0; trial < trials_at(comm); ++trial) {
    const Graph g = test::random_graph(gen, trial % 2 ? Dtype::f32 : Dtype::f64);
    const auto plan = test::random_plan(g, gen);
    const Extent p = partition::procs_for_ranks(comm.size());
    const std::string planner = partition::planner_names()[static_cast<std::size_t>(trial) % 4];
    SCOPED_TRACE("trial " + std::to_string(trial) + " on " + std::to_string(comm.size()) + " ranks");
    const engine::InputReads reads = trial % 2 ? engine::InputReads::again : engine::InputReads::move;
    expect_dry_run_is_execute(comm, g, plan, policies[trial % 3], reads);
    expect_dry_run_is_execute(comm, g, partition::make_plan(g, p, planner).partitions, policies[(trial + 1) % 3],
                              reads);
  }
}

// The dry run walks ranks with equal step lists once and counts the walk for each: ranks that run nothing
// (p < R) and ranks holding the same replicated blocks. Its figures are still what each rank's execute measures.
TEST(StepList, RanksWalkedOnceAreWhatExecuteMeasures) {
  const Communicator comm(MPI_COMM_WORLD);
  Graph chain, layer;
  chain.output(builders::matrix_chain_program(chain, 8, false, Dtype::f64));
  layer.output(builders::transformer_layer(layer, layer.input("X", Dtype::f32, {8, 6}), {8, 6, 2, 3}, 10, "L_"));
  for (const Graph* g : {&chain, &layer})
    for (Extent p : {1, 2}) {
      SCOPED_TRACE("p = " + std::to_string(p));
      expect_dry_run_is_execute(comm, *g, partition::make_plan(*g, p, "eindecomp").partitions, policies[p]);
    }
}

TEST(StepList, DryRunIsWhatExecuteMeasuresOnPlannedGraphs) {
  const Communicator comm(MPI_COMM_WORLD);
  Graph chain, skewed, layer;
  chain.output(builders::matrix_chain_program(chain, 24, false, Dtype::f64));
  skewed.output(builders::matrix_chain_program(skewed, 40, true, Dtype::f32));
  layer.output(builders::transformer_layer(layer, layer.input("X", Dtype::f32, {8, 6}), {8, 6, 2, 3}, 10, "L_"));
  const Extent p = partition::procs_for_ranks(comm.size());
  std::size_t turn = 0;  // oversubscribed: one policy per planner and graph, every policy in turn
  for (const Graph* g : {&chain, &skewed, &layer})
    for (const std::string& planner : partition::planners_for(*g)) {
      const engine::TransitionPolicy mine = policies[turn++ % 3];
      for (engine::TransitionPolicy policy : policies) {
        if (oversubscribed(comm) && policy != mine) continue;
        SCOPED_TRACE(planner + " " + std::string(engine::transition_policy_name(policy)));
        expect_dry_run_is_execute(comm, *g, partition::make_plan(*g, p, planner).partitions, policy);
      }
    }
}

// Without MPI, for R = 1..8: each join tuple runs on exactly one rank, and every partial one rank sends is
// one its owner receives.
TEST(StepList, StepsAgreeAcrossRanks) {
  std::mt19937 gen(43);
  for (int trial = 0; trial < 10; ++trial) {
    const Graph g = test::random_graph(gen, Dtype::f64);
    const auto plan = test::random_plan(g, gen);
    for (int R = 1; R <= 8; ++R) {
      const engine::Schedule schedule(g, plan, R, policies[trial % 3]);
      std::vector<engine::RankSteps> steps;
      for (int r = 0; r < R; ++r) steps.push_back(engine::rank_steps(g, schedule, r));
      for (std::size_t i = 0; i < steps[0].vertices.size(); ++i) {
        const VertexId v = steps[0].vertices[i].vertex;
        std::vector<Extent> tuples;
        std::vector<std::tuple<Extent, int, int>> sent, received;  // (block, from, to)
        for (int r = 0; r < R; ++r) {
          const engine::VertexSteps& s = steps[static_cast<std::size_t>(r)].vertices[i];
          ASSERT_EQ(s.vertex, v);
          for (const engine::KernelCall& call : s.work->kernels) tuples.push_back(call.tuple);
          for (const engine::PartialMessage& m : s.work->sends) sent.emplace_back(m.output_block, r, m.peer);
          for (const engine::PartialMessage& m : s.work->receives) received.emplace_back(m.output_block, m.peer, r);
        }
        std::sort(tuples.begin(), tuples.end());
        std::sort(sent.begin(), sent.end());
        std::sort(received.begin(), received.end());
        ASSERT_EQ(static_cast<Extent>(tuples.size()), schedule.vertex(v).num_tuples()) << g.vertex(v).name;
        for (std::size_t t = 0; t < tuples.size(); ++t) ASSERT_EQ(tuples[t], static_cast<Extent>(t));
        EXPECT_EQ(sent, received) << g.vertex(v).name << " on " << R << " ranks";
      }
    }
  }
}

// Vertices of one step class (whose steps rank_steps finds once per rank) are scheduled alike: one
// VertexSchedule, deferral and in-place rule aside, and per operand the same source, the same producer
// layout and operand layout and the same volumes per rank; and a planned chain of equal products is a few
// classes, not one per product, also when its products are cut two ways in turn.
TEST(StepList, VerticesOfAStepClassAreScheduledAlike) {
  std::mt19937 gen(47);
  Graph chain;  // 24 equal products
  chain.output(builders::matrix_chain(chain, std::vector<Extent>(25, 16), Dtype::f64));
  std::vector<std::pair<Graph, std::vector<PartitionVector>>> cases;
  for (int R : {1, 4, 6}) cases.emplace_back(chain, partition::make_plan(chain, R, "eindecomp").partitions);
  std::vector<PartitionVector> alternating = cases.back().second;  // products cut two ways in turn
  for (VertexId v = 0, product = 0; v < chain.size(); ++v)
    if (!chain.vertex(v).is_input())
      alternating[v] = PartitionVector(chain.resolved(v).unique_labels(),
                                       product++ % 2 ? std::vector<Extent>{2, 2, 1} : std::vector<Extent>{1, 2, 2});
  cases.emplace_back(chain, alternating);
  for (int trial = 0; trial < 6; ++trial) {
    Graph g = test::random_graph(gen, Dtype::f64);
    auto plan = test::random_plan(g, gen);
    cases.emplace_back(std::move(g), std::move(plan));
  }
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (int R = 1; R <= 6; ++R) {
      const Graph& g = cases[c].first;
      const engine::Schedule schedule(g, cases[c].second, R, policies[(c + R) % 3]);
      std::map<std::size_t, VertexId> first;  // per class, its first vertex
      for (VertexId v = 0; v < g.size(); ++v) {
        if (g.vertex(v).is_input()) continue;
        ASSERT_LT(schedule.step_class(v), schedule.num_step_classes());
        const VertexId u = first.try_emplace(schedule.step_class(v), v).first->second;
        if (u == v) continue;
        SCOPED_TRACE(g.vertex(u).name + " and " + g.vertex(v).name + " on " + std::to_string(R) + " ranks");
        EXPECT_EQ(&schedule.vertex(u), &schedule.vertex(v));
        EXPECT_EQ(schedule.deferred(u), schedule.deferred(v));
        for (std::size_t k = 0; k < g.vertex(v).inputs.size(); ++k) {
          const VertexId pu = g.vertex(u).inputs[k], pv = g.vertex(v).inputs[k];
          EXPECT_EQ(schedule.shared_operand(u, k), schedule.shared_operand(v, k));
          EXPECT_EQ(schedule.streamed(pu), schedule.streamed(pv));
          EXPECT_FALSE(schedule.reads_again(u, k) || schedule.reads_again(v, k));
          if (schedule.shared_operand(v, k) || schedule.streamed(pv)) continue;
          EXPECT_TRUE(schedule.layout(pu) == schedule.layout(pv));
          EXPECT_EQ(schedule.transition(u, k).volumes.sent, schedule.transition(v, k).volumes.sent);
          EXPECT_EQ(schedule.transition(u, k).volumes.received, schedule.transition(v, k).volumes.received);
        }
      }
      if (c < 4) {
        EXPECT_LE(schedule.num_step_classes(), 6u) << "chain case " << c << " on " << R << " ranks";
      }
    }
}

// Ranks with equal parts (RankParts: their input blocks and their work per step class) have equal step
// lists, and the dry run walks them once: on a plan of p = 1 every rank but the first runs nothing and all
// of them are one class.
TEST(StepList, RanksWithEqualPartsHaveEqualStepLists) {
  std::mt19937 gen(53);
  auto same_steps = [](const engine::RankSteps& a, const engine::RankSteps& b) {
    if (a.inputs != b.inputs || a.unread_inputs != b.unread_inputs || a.vertices.size() != b.vertices.size())
      return false;
    for (std::size_t i = 0; i < a.vertices.size(); ++i) {
      const engine::VertexSteps &x = a.vertices[i], &y = b.vertices[i];
      if (x.vertex != y.vertex || !(*x.work == *y.work) || x.released != y.released || x.in_place != y.in_place ||
          x.dead != y.dead)
        return false;
    }
    return true;
  };
  std::size_t equal_pairs = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const Graph g = test::random_graph(gen, Dtype::f64);
    const auto plan = trial % 2 ? test::random_plan(g, gen) : partition::make_plan(g, 1, "eindecomp").partitions;
    for (int R = 1; R <= 8; ++R) {
      const engine::Schedule schedule(g, plan, R, policies[trial % 3]);
      const engine::StepLists lists(g, schedule);
      std::vector<engine::RankParts> parts;
      for (int r = 0; r < R; ++r) parts.push_back(lists.parts(r));
      for (int r = 0; r < R; ++r)
        for (int s = 0; s < r; ++s) {
          if (!(parts[r] == parts[s])) continue;
          ++equal_pairs;
          EXPECT_EQ(lists.walk_key(parts[r]), lists.walk_key(parts[s]));
          EXPECT_TRUE(same_steps(engine::rank_steps(g, schedule, r), engine::rank_steps(g, schedule, s)))
              << "ranks " << s << " and " << r << " of " << R << ", trial " << trial;
        }
      if (trial % 2 == 0) {
        for (int r = 2; r < R; ++r) EXPECT_TRUE(parts[r] == parts[1]) << "rank " << r << " of " << R;
      }
    }
  }
  EXPECT_GT(equal_pairs, 0u);
}

// An input cut three ways by its three readers: with InputReads::again and a model where reading is free, the
// second and third read it again from its source (OperandSource::read), which moves nothing between ranks and
// reads what they need; with `move` they move it. The dry run counts either run as execute measures it.
TEST(StepList, AnInputCutThreeWaysIsReadAgainOrMoved) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph(
      "input X f64[12,8,10]\na = einsum(\"ijk->k\", X)\nb = einsum(\"ijk->ij\", X, agg=max)\n"
      "c = einsum(\"ijk->\", X, map=square)\noutput a, b, c\n",
      "reads.ein");
  const Extent R = static_cast<Extent>(comm.size());
  const std::vector<PartitionVector> plan{
      {}, PartitionVector("ijk", {1, 1, R}), PartitionVector("ijk", {R, 1, 1}), PartitionVector("ijk", {1, R, 1})};
  for (engine::InputReads reads : {engine::InputReads::again, engine::InputReads::move}) {
    SCOPED_TRACE(engine::input_reads_name(reads));
    expect_dry_run_is_execute(comm, g, plan, engine::TransitionPolicy::point_to_point, reads);
    engine::MachineModel model;
    model.file_seconds_per_byte = 0;
    const engine::Schedule schedule(g, plan, comm.size(), engine::TransitionPolicy::point_to_point, model, {}, reads);
    const engine::Traffic dry = engine::dry_run(g, schedule);
    for (VertexId v : {VertexId{2}, VertexId{3}}) {
      EXPECT_EQ(schedule.reads_again(v, 0), reads == engine::InputReads::again && R > 1);
      if (R > 1) {
        EXPECT_EQ(dry.floats_moved[v] == dry.partials_moved[v], reads == engine::InputReads::again) << v;
      }
    }
    Extent read = 0;
    for (const engine::RankTraffic& r : dry.ranks) read += r.floats_read;
    EXPECT_EQ(read, reads == engine::InputReads::again && R > 1 ? Extent{2 * 12 * 8 * 10} : Extent{0});
  }
}

// A matmul cut finer than the ranks (p = 12: {i:2, j:3, k:2}) with its inputs read from their source
// (InputReads::again): each input is streamed, each block read just before the first call on the rank that reads
// it and released after the last, so a rank holds no more than with the inputs loaded before the run (less where
// its calls read several blocks in turn); the dry run counts that as execute measures, and the product is right.
TEST(StepList, InputsReadInTurnAreStreamedByTheKernelCalls) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g =
      parse_graph("input A f64[16,12]\ninput B f64[12,20]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n", "stream.ein");
  const std::vector<PartitionVector> plan{{}, {}, PartitionVector("ijk", {2, 3, 2})};
  const VertexId A = 0, B = 1, C = 2;
  for (engine::InputReads reads : {engine::InputReads::again, engine::InputReads::move}) {
    SCOPED_TRACE(engine::input_reads_name(reads));
    expect_dry_run_is_execute(comm, g, plan, engine::TransitionPolicy::point_to_point, reads);
  }
  {  // 0.5 everywhere, so every element of C is 0.5 * 0.5 * 12
    const engine::Schedule schedule(g, plan, comm.size(), engine::TransitionPolicy::automatic, {}, {},
                                    engine::InputReads::again);
    std::vector<Extent> read(2, 0);
    const engine::InputReader<Mem> reader = [&](VertexId v, const engine::AnyBoxedBlocks<Mem>& blocks,
                                                engine::ReadCall call) {
      EXPECT_EQ(call, engine::ReadCall::local);
      for (const auto& [box, block] : std::get<engine::BoxedBlocks<double, Mem>>(blocks)) {
        read[v] += box.size();
        Kokkos::deep_copy(block.view(), 0.5);
      }
    };
    const auto result = test::execute_once(Exec{}, comm, g, schedule, constant_inputs(comm, g, schedule), {}, reader);
    const auto& c = std::get<redistribute::DistributedTensorRelation<double, Mem>>(*result.values[C]);
    for (const auto& [key, block] : c.local()) {
      const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.view());
      for (std::size_t i = 0; i < host.extent(0); ++i) ASSERT_EQ(host(i), 3.0);
    }
    // Each rank reads each block its calls use once.
    std::set<Extent> a, b;
    for (Extent t : schedule.vertex(C).tuples_of(comm.rank()))
      a.insert(schedule.vertex(C).operand_block(0, t)), b.insert(schedule.vertex(C).operand_block(1, t));
    EXPECT_EQ(read[A], static_cast<Extent>(a.size()) * 8 * 4);
    EXPECT_EQ(read[B], static_cast<Extent>(b.size()) * 4 * 10);
  }
  for (int R = 1; R <= 12; ++R) {
    SCOPED_TRACE(std::to_string(R) + " ranks");
    const engine::Schedule streaming(g, plan, R, engine::TransitionPolicy::point_to_point, {}, {},
                                     engine::InputReads::again),
        loading(g, plan, R, engine::TransitionPolicy::point_to_point, {}, {}, engine::InputReads::move);
    EXPECT_TRUE(streaming.streamed(A));
    EXPECT_TRUE(streaming.streamed(B));
    EXPECT_FALSE(loading.streamed(A));
    const engine::Traffic held = engine::dry_run(g, streaming), loaded = engine::dry_run(g, loading);
    for (int r = 0; r < R; ++r) {
      const engine::RankSteps steps = engine::rank_steps(g, streaming, r);
      std::map<engine::StreamedBlock, int> reads, releases;  // each block read once and released once, in order
      for (const engine::KernelCall& call : steps.vertices[0].work->kernels) {
        for (const engine::StreamedBlock& b : call.reads) EXPECT_EQ(reads[b]++, releases[b]);
        for (const engine::StreamedBlock& b : call.releases) EXPECT_EQ(releases[b]++ + 1, reads[b]);
      }
      EXPECT_EQ(reads, releases);
      EXPECT_LE(held.ranks[r].peak_block_bytes, loaded.ranks[r].peak_block_bytes);
    }
  }
  // On 2 ranks each rank runs one row block of C: A's three blocks stay from their first call (k = 0) to their
  // last (k = 1), B's are read and released call by call; the two blocks of C are held.
  const engine::Schedule two(g, plan, 2, engine::TransitionPolicy::point_to_point, {}, {}, engine::InputReads::again);
  EXPECT_EQ(engine::dry_run(g, two).ranks[0].peak_block_bytes, (3 * 8 * 4 + 4 * 10 + 2 * 8 * 10) * sizeof(double));
}

// A reader that numbers its tuples in another label order than its producer's output (`ji,jk->ik` after the
// transpose `ij->ji`, both cut 2 x 2) finds every block where it runs: the producer numbers its tuples in the
// reader's order (engine::tuple_orders), so nothing moves for that operand at any R.
// In the equation's order, two of the four blocks sat on a rank that does not read them.
TEST(StepList, TransposingReaderFindsItsBlocksInPlace) {
  const Graph g = parse_graph(
      "input A f64[12,10]\ninput B f64[10,6]\nT = einsum(\"ij->ji\", A, map=exp)\n"
      "C = einsum(\"ji,jk->ik\", T, B)\noutput C\n",
      "transpose.ein");
  const std::vector<PartitionVector> plan{{}, {}, PartitionVector("ij", {2, 2}), PartitionVector("jik", {2, 2, 1})};
  EXPECT_EQ(engine::tuple_orders(g, plan), (std::vector<std::string>{"", "", "ij", "ik"}));
  const VertexId t = *g.find("T"), c = *g.find("C");
  for (int R = 1; R <= 8; ++R) {
    const engine::Schedule schedule(g, plan, R, engine::TransitionPolicy::point_to_point);
    for (Extent b = 0; b < 4; ++b)
      EXPECT_TRUE(schedule.vertex(c).operand_layout(0).placement().holds(schedule.layout(t).owner(b), b)) << R;
    const std::vector<Extent> sent = schedule.transition(c, 0).volumes.sent.all();
    EXPECT_EQ(std::accumulate(sent.begin(), sent.end(), Extent{0}), 0) << R;
  }
}

TEST(StepList, StepsOfAnotherRankAreRefused) {
  Graph g;
  g.output(builders::matrix_chain_program(g, 8, false, Dtype::f64));
  const engine::Schedule schedule(g, partition::make_plan(g, 2, "eindecomp").partitions, 2);
  EXPECT_THROW(engine::rank_steps(g, schedule, 2), Error);
  EXPECT_THROW(engine::rank_steps(g, schedule, -1), Error);
}

}  // namespace

namespace {

// A block-sparse graph (docs/sparse.md): a product of two sparse inputs, its transpose, a product with a
// dense input, an element-wise product with a third sparse input (the intersection), a difference with that
// input (the union), and an add with a dense input (computed dense, its absent blocks zero), with random
// shapes of density `density`.
Graph sparse_graph(std::mt19937& gen, double density) {
  Graph g;
  const VertexId A = g.sparse_input("A", Dtype::f64, {30, 24}), B = g.sparse_input("B", Dtype::f64, {24, 18}),
                 W = g.input("W", Dtype::f64, {18, 12}), D = g.sparse_input("D", Dtype::f64, {30, 12}),
                 X = g.input("X", Dtype::f64, {30, 12});
  std::uniform_real_distribution<double> u(0, 1);
  for (VertexId v : {A, B, D}) {
    std::vector<Extent> parts;
    for (Extent e : g.vertex(v).bound) parts.push_back(1 + static_cast<Extent>(gen() % std::min<Extent>(e, 6)));
    const BlockGrid grid(g.vertex(v).bound, parts);
    std::vector<bool> present;
    for (Extent b = 0; b < grid.num_blocks(); ++b) present.push_back(u(gen) < density);
    g.bind_shape(v, BlockShape(grid, present));
  }
  const VertexId C = g.einsum("ij,jk->ik", A, B, {JoinOp::mul, AggOp::sum, {}, "C"});
  const VertexId T = g.einsum("ik->ki", C, {JoinOp::mul, AggOp::sum, {MapKind::relu, 0}, "T"});
  const VertexId H = g.einsum("ik,kl->il", C, W, {JoinOp::mul, AggOp::sum, {}, "H"});
  const VertexId E = g.einsum("il,il->il", H, D, {JoinOp::mul, AggOp::sum, {}, "E"});
  const VertexId F = g.einsum("il,il->il", E, D, {JoinOp::sub, AggOp::sum, {MapKind::scale, 2}, "F"});
  const VertexId G = g.einsum("il,il->il", F, X, {JoinOp::add, AggOp::sum, {}, "G"});
  g.output(T);
  g.output(F);
  g.output(G);
  return g;
}

// One CallCosts handed to the dry runs of several plans and rank counts of a graph (as the planner's candidates
// share it) changes none of them: each equals a dry run that prices its calls alone.
TEST(StepList, SharedCallCostsChangeNoDryRun) {
  std::mt19937 gen(61);
  for (int trial = 0; trial < 8; ++trial) {
    const Graph g = test::random_graph(gen, trial % 2 ? Dtype::f32 : Dtype::f64);
    engine::CallCosts shared(g, engine::MachineModel{});
    for (int variant = 0; variant < 3; ++variant) {
      const auto plan = test::random_plan(g, gen);
      const int R = 1 + variant * 2;
      const engine::Schedule schedule(g, plan, R, policies[variant]);
      const engine::Traffic alone = engine::dry_run(g, schedule), with = engine::dry_run(g, schedule, {}, &shared);
      EXPECT_EQ(with.floats_moved, alone.floats_moved);
      EXPECT_EQ(with.peak_memory_bytes, alone.peak_memory_bytes);
      EXPECT_EQ(with.vertex_seconds, alone.vertex_seconds);
      EXPECT_EQ(with.busiest_accessed, alone.busiest_accessed);
      for (int r = 0; r < R; ++r) {
        EXPECT_EQ(with.ranks[r].flops, alone.ranks[r].flops);
        EXPECT_EQ(with.ranks[r].peak_block_bytes, alone.ranks[r].peak_block_bytes);
        EXPECT_EQ(with.ranks[r].tuples, alone.ranks[r].tuples);
      }
    }
  }
}

// Two operands of one vertex that read one producer in layouts of the same cut may share one of its blocks on a
// rank, or two: the dry run classes ranks by how many they share (walk_key), and its figures stay what execute
// measures, on a product of a value with its own transpose under random plans of uniform blocks.
TEST(StepList, OperandsSharingAProducersBlocksAreWalkedByWhatTheyShare) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph(
      "input A f64[8,8]\nX = einsum(\"ij->ij\", A, map=exp)\n"
      "Y = einsum(\"ij,ji->ij\", X, X)\noutput Y\n",
      "transpose_product.ein");
  std::mt19937 gen(61);
  for (int trial = 0; trial < trials_at(comm); ++trial) {
    std::vector<PartitionVector> plan(g.size());
    const Extent i = Extent{1} << (gen() % 3), j = Extent{1} << (gen() % 3);
    plan[1] = PartitionVector("ij", {i, j});
    plan[2] = PartitionVector("ij", {gen() % 2 ? i : j, gen() % 2 ? j : i});
    expect_dry_run_is_execute(comm, g, plan, policies[trial % 3]);
  }
}

// engine::estimated_seconds, the planner's estimate without a walk, is the dry run's estimated makespan to the bit
// wherever every vertex's calls are alike (dense, uniform operand grids), on random graphs and plans and on planned
// chains up to p = R = 64; nothing where a grid is uneven.
TEST(StepList, EstimateWithoutAWalkIsTheDryRunsToTheBit) {
  std::mt19937 gen(59);
  int compared = 0;
  auto compare = [&](const Graph& g, const std::vector<PartitionVector>& plan, int R, engine::TransitionPolicy policy) {
    const engine::Schedule schedule(g, plan, R, policy);
    const std::optional<double> estimate = engine::estimated_seconds(g, schedule);
    if (!estimate) return false;
    EXPECT_EQ(*estimate, engine::dry_run(g, schedule).estimated_seconds()) << "R = " << R;
    ++compared;
    return true;
  };
  for (int trial = 0; trial < 12; ++trial) {
    const Graph g = test::random_graph(gen, trial % 2 ? Dtype::f32 : Dtype::f64);
    const auto plan = trial % 2 ? test::random_plan(g, gen) : partition::make_plan(g, 4, "eindecomp").partitions;
    for (int R : {1, 2, 3, 4, 8, 16}) compare(g, plan, R, policies[trial % 3]);
  }
  Graph chain;
  chain.output(builders::matrix_chain_program(chain, 64, false, Dtype::f64));
  for (int R : {4, 16, 64})
    for (const char* planner : {"eindecomp", "sqrt", "data"})
      EXPECT_TRUE(compare(chain, partition::make_plan(chain, R, planner).partitions, R, policies[R % 3])) << planner;
  EXPECT_GT(compared, 20);
  Graph uneven;
  const VertexId A = uneven.input("A", Dtype::f64, {30, 30});
  uneven.output(uneven.einsum("ij,jk->ik", A, A));
  const std::vector<PartitionVector> cut{{}, PartitionVector("ijk", {4, 1, 1})};
  EXPECT_FALSE(engine::estimated_seconds(uneven, engine::Schedule(uneven, cut, 4)));
}

}  // namespace

// Sparse vertices run only the join tuples whose operand blocks are all present, each once; absent output
// blocks have no site; and the dry run is what execute measures, under random plans and plans cut along the
// shapes.
TEST(StepList, SparseVerticesRunThePresentBlockPairs) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 gen(47);
  for (int trial = 0; trial < trials_at(comm); ++trial) {
    const Graph g = sparse_graph(gen, 0.1 + 0.1 * trial);
    for (const auto& plan : {test::random_plan(g, gen), partition::shape_aligned(g, test::random_plan(g, gen), 1)}) {
      SCOPED_TRACE("trial " + std::to_string(trial));
      expect_dry_run_is_execute(comm, g, plan, policies[trial % 3]);
      for (int R = 1; R <= 5; ++R) {
        const engine::Schedule schedule(g, plan, R);
        ASSERT_TRUE(schedule.shape(g.find("C").value()).has_value());
        ASSERT_FALSE(schedule.shape(g.find("G").value()).has_value());  // add with a dense operand: computed dense
        for (const char* name : {"C", "T", "H", "E", "F"}) {
          const VertexId v = g.find(name).value();
          const engine::VertexSchedule& vs = schedule.vertex(v);
          ASSERT_TRUE(vs.sparse()) << name;
          std::vector<Extent> tuples;
          for (int r = 0; r < R; ++r) {
            const engine::RankSteps steps = engine::rank_steps(g, schedule, r);
            for (const engine::KernelCall& call : steps.vertices[v - 5].work->kernels) tuples.push_back(call.tuple);
          }
          std::sort(tuples.begin(), tuples.end());
          EXPECT_EQ(tuples, vs.present_tuples()) << name << " on " << R << " ranks";
          // A tuple runs exactly when every operand block it reads is present in the producer's shape, or for the
          // difference F (the union), any.
          const Vertex& vertex = g.vertex(v);
          const bool either = std::string(name) == "F";
          for (Extent t = 0; t < vs.num_tuples(); ++t) {
            bool all = true, any = false;
            for (std::size_t k = 0; k < vertex.inputs.size(); ++k)
              if (const auto& shape = schedule.shape(vertex.inputs[k])) {
                const bool here = shape->on(vs.operand_layout(k).grid()).present(vs.operand_block(k, t));
                all = all && here;
                any = any || here;
              }
            EXPECT_EQ(either ? any : all, std::binary_search(tuples.begin(), tuples.end(), t))
                << name << " tuple " << t;
          }
          const BlockShape out = *schedule.shape(v);
          for (Extent b = 0; b < out.grid().num_blocks(); ++b)
            EXPECT_EQ(out.present(b), !vs.output_layout().placement().absent(b)) << name << " block " << b;
        }
      }
    }
  }
}

// Regression (issue 41): a dense input whose first reader skips absent blocks (a product with a sparse input)
// is placed whole, so that a later reader finds every block of it; it used to hold only the blocks that reader's
// running tuples read, and a later reader read zeros elsewhere.
TEST(StepList, ADenseInputFirstReadByASparseVertexIsWhole) {
  Graph g;
  const VertexId Z = g.sparse_input("Z", Dtype::f64, {20, 17}), W = g.input("W", Dtype::f64, {20, 17});
  g.bind_shape(Z, BlockShape(BlockGrid({20, 17}, {2, 2}), {false, true, false, false}));
  g.output(g.einsum("ij,ij->ij", Z, W, {JoinOp::mul, AggOp::sum, {}, "P"}));
  g.output(g.einsum("ij->ij", W, {JoinOp::mul, AggOp::sum, {MapKind::scale, 2}, "Q"}));
  std::mt19937 gen(43);
  for (int trial = 0; trial < 6; ++trial) {
    const auto plan = trial % 2 ? test::random_plan(g, gen) : partition::shape_aligned(g, test::random_plan(g, gen), 1);
    for (int R = 1; R <= 5; ++R) {
      const engine::Schedule schedule(g, plan, R);
      ASSERT_TRUE(schedule.vertex(2).sparse());
      EXPECT_FALSE(schedule.layout(W).placement().has_absent()) << "trial " << trial << ", R = " << R;
    }
  }
}

// Where the even share of a sparse vertex's flops falls inside an output block's tuples, the share ends at the
// block's edge when sending and adding the partial block costs the model more than the flops the edge moves, and
// inside the block when the partial costs less; without a model, at the even share. Four 64³ block products, the
// middle two into one output block: the even cut of two ranks falls between them.
TEST(StepList, SparseSharesEndAtOutputBlockEdgesWhenPartialsCostMore) {
  Graph g;
  const VertexId A = g.sparse_input("A", Dtype::f64, {128, 128}), B = g.sparse_input("B", Dtype::f64, {128, 128});
  const BlockGrid grid({128, 128}, {2, 2});
  g.bind_shape(A, BlockShape(grid, {true, true, false, true}));  // A00 A01 A11
  g.bind_shape(B, BlockShape(grid, {true, true, false, true}));  // B00 B01 B11
  const VertexId C = g.einsum("ij,jk->ik", A, B, {JoinOp::mul, AggOp::sum, {}, "C"});
  g.output(C);
  const auto plan = partition::shape_aligned(g, {{}, {}, PartitionVector("ijk", {1, 1, 1})}, 1);
  // C00 = A00 B00; C01 = A00 B01 + A01 B11; C11 = A11 B11.
  engine::MachineModel costly, free;
  costly.latency_seconds = 1;
  free.latency_seconds = 0, free.seconds_per_byte = 0, free.memory_bytes_per_second = 1e30;
  const Extent C01 = 1;
  // The defaults: a partial of 64² doubles (2 us + 32 KiB at 10 GB/s and three passes at 10 GB/s: 15 us) costs
  // more than the 64³ product (13 us at 40 GFLOP/s) the edge moves.
  for (const auto& [model, split] : {std::pair{engine::MachineModel{}, false}, {costly, false}, {free, true}}) {
    const engine::Schedule schedule(g, plan, 2, engine::TransitionPolicy::automatic, model);
    const engine::VertexSchedule& vs = schedule.vertex(C);
    ASSERT_EQ(vs.present_tuples().size(), 4u);
    EXPECT_EQ(vs.contributors(C01).size(), split ? 2u : 1u) << "latency " << model.latency_seconds;
    EXPECT_EQ(vs.tuples_of(0).size() + vs.tuples_of(1).size(), 4u);
    EXPECT_EQ(vs.tuples_of(0).size() == 2, split);  // else 1 and 3 tuples: the cut moved to an edge
  }
  // Without a model (a VertexSchedule alone), the share ends where the flops reach half of them.
  const engine::VertexSchedule plain(g.vertex(C), plan[C], 2, {}, {&*g.vertex(A).shape, &*g.vertex(B).shape});
  EXPECT_EQ(plain.tuples_of(0).size(), 2u);
  EXPECT_EQ(plain.contributors(C01).size(), 2u);
  // Whatever the model, the dry run is what execute measures.
  const Communicator comm(MPI_COMM_WORLD);
  expect_dry_run_is_execute(comm, g, plan, engine::TransitionPolicy::automatic);
}

// Cut along the shapes with `refine`: the output's last label of a sparse vertex in twice the shape's parts, the
// others as its sparse operands' values are cut; a reader of a refined value takes its refined cut and refines
// nothing more (once along a chain of sparse vertices).
TEST(StepList, ShapeAlignedRefinesTheOutputsLastLabel) {
  std::mt19937 gen(53);
  const Graph g = sparse_graph(gen, 0.3);
  const auto base = test::random_plan(g, gen);
  const auto aligned = partition::shape_aligned(g, base, 1), refined = partition::shape_aligned(g, base, 1, 2);
  const VertexId C = g.find("C").value(), T = g.find("T").value();  // ij,jk->ik of sparse inputs; ik->ki of C
  auto doubled = [&](VertexId v, char c) {
    return std::min(2 * aligned[v].parts_of(c), g.vertex(v).resolved->extent(c));
  };
  EXPECT_EQ(refined[C].parts_of('i'), aligned[C].parts_of('i'));
  EXPECT_EQ(refined[C].parts_of('j'), aligned[C].parts_of('j'));
  EXPECT_EQ(refined[C].parts_of('k'), doubled(C, 'k'));
  EXPECT_EQ(refined[T].parts_of('k'), refined[C].parts_of('k'));
  EXPECT_EQ(refined[T].parts_of('i'), aligned[T].parts_of('i'));
  const Communicator comm(MPI_COMM_WORLD);
  expect_dry_run_is_execute(comm, g, refined, engine::TransitionPolicy::automatic);
}

// A sparse vertex's running tuples are spread by their flops, not by the position among all tuples: with the
// present blocks all in the first rows (where t·R/J would give every tuple to the first ranks), each rank's
// share of the flops is within one tuple's of an even share (under a model where partial results cost nothing to
// reduce: with the defaults, these tiny blocks' shares end at output blocks' edges, as the next test checks).
TEST(StepList, SparseTuplesAreSpreadByFlops) {
  Graph g;
  const VertexId A = g.sparse_input("A", Dtype::f64, {64, 64}), B = g.input("B", Dtype::f64, {64, 16});
  const BlockGrid uneven = BlockGrid::from_cuts({64, 64}, {{0, 2, 6, 30, 31}, {0, 40, 44}});  // A's rows 0..6
  std::vector<bool> present;
  for (Extent b = 0; b < uneven.num_blocks(); ++b) present.push_back(b < 6);
  g.bind_shape(A, BlockShape(uneven, present));
  g.output(g.einsum("ij,jk->ik", A, B, {JoinOp::mul, AggOp::sum, {}, "C"}));
  // Cut along the shape: the 5×3 blocks of A, B's columns in 2.
  const auto plan = partition::shape_aligned(g, {{}, {}, PartitionVector("ijk", {1, 1, 2})}, 1);
  engine::MachineModel free_partials;
  free_partials.latency_seconds = 0, free_partials.seconds_per_byte = 0, free_partials.memory_bytes_per_second = 1e30;
  for (int R = 1; R <= 6; ++R) {
    const engine::Schedule schedule(g, plan, R, engine::TransitionPolicy::automatic, free_partials);
    const engine::VertexSchedule& vs = schedule.vertex(2);
    auto flops = [&](Extent t) {  // i × j × k of the tuple's blocks
      const std::vector<Bound> bounds = vs.tuple_bounds(t);
      return static_cast<double>(bounds[0][0] * bounds[0][1] * bounds[1][1]);
    };
    double total = 0, largest = 0;
    for (Extent t : vs.present_tuples()) total += flops(t), largest = std::max(largest, flops(t));
    for (int r = 0; r < R; ++r) {
      double mine = 0;
      for (Extent t : vs.tuples_of(r)) mine += flops(t);
      EXPECT_LE(std::abs(mine - total / R), largest) << "rank " << r << " of " << R;
    }
  }
}

// The dry run walks one rank of each class of equal walk keys (StepLists::walk_key) and counts it for the class. On
// random graphs under random plans, whose grids are often uneven (the key then holds block sizes and call bounds),
// on sparse graphs, and on planned chains of uneven shapes at p = R, every figure of every rank at R up to 64 is that
// of walking each rank alone.
TEST(StepList, RanksClassedByWalkKeyWalkAsEachRankAlone) {
  std::mt19937 gen(67);
  int compared = 0;
  auto expect_same = [&](const Graph& g, const engine::Schedule& schedule) {
    const engine::Traffic classed = engine::dry_run(g, schedule),
                          alone = engine::dry_run(g, schedule, {}, nullptr, engine::RankClasses::none);
    EXPECT_EQ(classed.floats_moved, alone.floats_moved);
    EXPECT_EQ(classed.partials_moved, alone.partials_moved);
    EXPECT_EQ(classed.busiest_accessed, alone.busiest_accessed);
    EXPECT_EQ(classed.peak_memory_bytes, alone.peak_memory_bytes);
    EXPECT_EQ(classed.peak_vertex, alone.peak_vertex);
    EXPECT_EQ(classed.vertex_seconds, alone.vertex_seconds);
    for (int r = 0; r < schedule.ranks(); ++r) {
      const engine::RankTraffic &a = classed.ranks[r], &b = alone.ranks[r];
      EXPECT_EQ(a.floats_sent, b.floats_sent) << "rank " << r;
      EXPECT_EQ(a.floats_received, b.floats_received) << "rank " << r;
      EXPECT_EQ(a.peak_block_bytes, b.peak_block_bytes) << "rank " << r;
      EXPECT_EQ(a.tuples, b.tuples) << "rank " << r;
      EXPECT_EQ(a.floats_read, b.floats_read) << "rank " << r;
      EXPECT_EQ(a.flops, b.flops) << "rank " << r;
    }
    ++compared;
  };
  engine::MachineModel model;
  model.file_seconds_per_byte = 0;  // inputs read again wherever a reader cuts them otherwise
  for (int trial = 0; trial < 8; ++trial) {
    const Graph g = test::random_graph(gen, trial % 2 ? Dtype::f32 : Dtype::f64);
    const auto plan = test::random_plan(g, gen);
    const engine::InputReads reads = trial % 2 ? engine::InputReads::again : engine::InputReads::move;
    for (int R : {5, 16, 37, 64}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " on " + std::to_string(R) + " ranks");
      expect_same(g, engine::Schedule(g, plan, R, policies[(trial + R) % 3], model, {}, reads));
    }
  }
  const Graph sparse = sparse_graph(gen, 0.3);
  for (int R : {7, 24}) expect_same(sparse, engine::Schedule(sparse, test::random_plan(sparse, gen), R));
  Graph chain;
  chain.output(builders::matrix_chain_program(chain, 40, true, Dtype::f32));
  for (int R : {48, 64})
    for (engine::TransitionPolicy policy : policies)
      expect_same(chain, engine::Schedule(chain, partition::make_plan(chain, R, "eindecomp").partitions, R, policy));
  EXPECT_EQ(compared, 8 * 4 + 2 + 6);
}
