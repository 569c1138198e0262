// The engine across ranks: random graphs under random plans (R < p and R > p alike) and planned graphs,
// every output block compared with the single-rank unpartitioned evaluation, and every rank's measured
// traffic and block bytes compared with the dry run. Every rank draws the same cases from one seed.
#include <einrel_DryRun.hpp>
#include <einrel_Engine.hpp>
#include <einrel_Evaluator.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_Planner.hpp>
#include <einrel_SlicedPartitions.hpp>
#include <einrel_Slicing.hpp>
#include <einrel_TestDryRun.hpp>
#include <einrel_TestEngine.hpp>
#include <einrel_TestGraphs.hpp>
#include <einrel_TestHelpers.hpp>
#include <einrel_TestLayouts.hpp>
#include <einrel_WarmMemory.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <sys/resource.h>

#include <random>
#include <set>

namespace {

using namespace einrel;
using comm::Communicator;
using partition::PartitionVector;
using Values = std::vector<std::optional<AnyTensor<TEST_MEMSPACE>>>;
using Distributed = std::vector<std::optional<engine::AnyDistributed<TEST_MEMSPACE>>>;

template <class Scalar>
Values whole_inputs(const Graph& g, unsigned seed, double lo, double hi) {
  Values values(g.size());
  for (VertexId v = 0; v < g.size(); ++v)
    if (g.vertex(v).is_input())
      values[v] = tensor_from_host<TEST_MEMSPACE>(g.vertex(v).name, g.vertex(v).bound,
                                                  test::random_values<Scalar>(g.vertex(v).bound, seed + v, lo, hi));
  return values;
}

// This rank's blocks of every input in the schedule's layout, cut from the whole tensors.
template <class Scalar>
Distributed scatter(const Communicator& comm, const Graph& g, const engine::Schedule& schedule, const Values& whole) {
  using T = Tensor<Scalar, TEST_MEMSPACE>;
  Distributed inputs(g.size());
  for (VertexId v = 0; v < g.size(); ++v) {
    if (!g.vertex(v).is_input()) continue;
    const redistribute::BlockLayout& layout = schedule.layout(v);
    Relation<Scalar, TEST_MEMSPACE> local(layout.grid().rank());
    for (Extent b : layout.blocks_of(comm.rank())) {
      const Key key = layout.grid().key(b);
      const Box box = layout.grid().box(key);
      const T block = T::uninitialized("input block", box.extents());
      copy_box(TEST_EXECSPACE{}, std::get<T>(*whole[v]), box.lo, block, std::vector<Extent>(box.lo.size(), 0),
               box.extents());
      local.insert(key, block);
    }
    inputs[v] = redistribute::DistributedTensorRelation<Scalar, TEST_MEMSPACE>(comm, layout, std::move(local));
  }
  Kokkos::fence();
  return inputs;
}

// Every local output block of `result` (a run of g) against `reference`, an evaluation of `computes`: g, or
// the graph g was sliced from (its outputs have the same names).
template <class Scalar>
void expect_outputs(const Graph& g, const engine::Schedule& schedule, const engine::EngineResult<TEST_MEMSPACE>& result,
                    const Graph& computes, const Evaluation<TEST_MEMSPACE>& reference, double tol) {
  using T = Tensor<Scalar, TEST_MEMSPACE>;
  for (VertexId v : g.outputs()) {
    SCOPED_TRACE(g.vertex(v).name + (g.vertex(v).is_input() ? " (input)" : " " + schedule.partitions()[v].str()));
    EXPECT_TRUE(result.values[v].has_value());
    if (!result.values[v]) continue;
    const auto& d = std::get<redistribute::DistributedTensorRelation<Scalar, TEST_MEMSPACE>>(*result.values[v]);
    EXPECT_TRUE(d.layout() == schedule.layout(v));
    const auto expected = tensor_to_host(std::get<T>(*reference.values[*computes.find(g.vertex(v).name)]));
    for (const auto& [key, block] : d.local()) {
      const Box box = d.grid().box(key);
      std::vector<double> want;
      test::for_each_element(box, d.bound(), std::vector<Extent>(box.lo.size(), 0),
                             [&](Extent flat) { want.push_back(expected[flat]); });
      test::expect_all_close(tensor_to_host(block), want, tol);
    }
  }
}

// Every local output block of `result` against the unpartitioned evaluation of `whole`.
template <class Scalar>
void expect_reference_outputs(const Graph& g, const engine::Schedule& schedule,
                              const engine::EngineResult<TEST_MEMSPACE>& result, const Values& whole, double tol) {
  expect_outputs<Scalar>(g, schedule, result, g, evaluate_unpartitioned(TEST_EXECSPACE{}, g, whole), tol);
}

// Runs g under `plan` on every rank of comm, checks every local output block against the unpartitioned
// reference and the measured figures against the dry run, and returns what the run measured here.
template <class Scalar>
engine::EngineResult<TEST_MEMSPACE> check_engine(
    const Communicator& comm, const Graph& g, const std::vector<PartitionVector>& plan, unsigned seed, double tol,
    double lo = -1, double hi = 1, engine::TransitionPolicy policy = engine::TransitionPolicy::automatic) {
  const engine::Schedule schedule(g, plan, comm.size(), policy);
  const Values whole = whole_inputs<Scalar>(g, seed, lo, hi);
  auto result = test::execute_once(TEST_EXECSPACE{}, comm, g, schedule, scatter<Scalar>(comm, g, schedule, whole));
  expect_reference_outputs<Scalar>(g, schedule, result, whole, tol);
  test::expect_dry_run_matches(comm, g, schedule, result);
  return result;
}

template <class Scalar>
void check_random_graphs(unsigned seed, double tol) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 gen(seed);
  for (int trial = 0; trial < 12; ++trial) {
    const Graph g = test::random_graph(gen, dtype_of<Scalar>());
    SCOPED_TRACE("trial " + std::to_string(trial) + " on " + std::to_string(comm.size()) + " ranks:\n" +
                 print_graph(g));
    for (int plan = 0; plan < 2; ++plan) check_engine<Scalar>(comm, g, test::random_plan(g, gen), seed + trial, tol);
  }
}

TEST(TEST_CATEGORY, RandomGraphsUnderRandomPlansF64) { check_random_graphs<double>(31, 1e-12); }
TEST(TEST_CATEGORY, RandomGraphsUnderRandomPlansF32) { check_random_graphs<float>(32, 1e-5); }

// Sliced graphs (docs/planner.md "Slicing"): intermediate values of random graphs sliced along each dimension in
// 2 and 4 passes where slice_graph can, with and without the producers before the value, under a random plan
// carried over (partition::sliced_plan): the outputs
// equal the unsliced graph's unpartitioned evaluation, and every rank's measured figures the dry run.
TEST(TEST_CATEGORY, SlicedGraphsComputeWhatTheGraphComputes) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 gen(47);
  int runs = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const Graph g = test::random_graph(gen, Dtype::f64);
    partition::Plan plan;
    plan.partitions = test::random_plan(g, gen);
    const Values whole = whole_inputs<double>(g, 90 + static_cast<unsigned>(trial), -1, 1);
    const auto reference = evaluate_unpartitioned(TEST_EXECSPACE{}, g, whole);
    for (VertexId v = 0; v < g.size(); ++v)
      for (int d = 0; d < static_cast<int>(g.vertex(v).bound.size()); ++d)
        for (Extent passes : {2, 4})
          for (bool before : {false, true}) {
            const std::optional<SlicedGraph> sliced = slice_graph(g, v, d, passes, before);
            if (!sliced || sliced->before != before) continue;
            const Graph& s = sliced->graph;
            SCOPED_TRACE("trial " + std::to_string(trial) + " on " + std::to_string(comm.size()) + " ranks, " +
                         sliced->describe() + ":\n" + print_graph(g));
            const partition::Plan carried = partition::sliced_plan(*sliced, plan);
            const engine::Schedule schedule(s, carried.partitions, comm.size());
            Values inputs(s.size());
            for (VertexId u = 0; u < s.size(); ++u)
              if (s.vertex(u).is_input()) inputs[u] = whole[*g.find(s.vertex(u).name)];
            auto result =
                test::execute_once(TEST_EXECSPACE{}, comm, s, schedule, scatter<double>(comm, s, schedule, inputs));
            expect_outputs<double>(s, schedule, result, g, reference, 1e-11);
            test::expect_dry_run_matches(comm, s, schedule, result);
            ++runs;
          }
  }
  EXPECT_GT(runs, 20);
}

// Every kind of vertex the bar names, planned by the planners for p = the ranks rounded up to a power of
// two and for p = 1 and 4·R: with p = R the floats moved stay within the paper model's predicted cost (an
// upper bound), and with p >= R every rank computes.
TEST(TEST_CATEGORY, PlannedGraphsMoveNoMoreThanPredicted) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph(R"(input A f64[37,50]
input B f64[50,29]
input C f64[29,64]
input Q f64[24,4,8]
input K f64[24,4,8]
T = einsum("ij,jk->ik", A, B)
U = einsum("ij,jk,kl->il", A, B, C)
S = softmax(U)
W = einsum("shd,thd->hst", Q, K, map=scale(0.35))
P = softmax(W)
m = einsum("ij->j", U, agg=max)
n = einsum("ij->i", T, agg=min)
x = einsum("ij,ij->", A, A, join=sqdiff, agg=max)
O = einsum("i,j->ij", m, n)
X = einsum("ij->ji", T, map=tanh)
output S, P, m, n, x, O, X
)",
                              "bar.ein");
  const Extent R = comm.size();
  for (const std::string planner : {"eindecomp", "sqrt", "greedy"})
    for (Extent p : {partition::procs_for_ranks(static_cast<int>(R)), Extent{1},
                     4 * partition::procs_for_ranks(static_cast<int>(R))}) {
      SCOPED_TRACE(planner + " p=" + std::to_string(p));
      const partition::Plan plan = partition::make_plan(g, p, planner, partition::CostModel::paper);
      const auto result = check_engine<double>(comm, g, plan.partitions, 7, 1e-11);
      Extent moved = 0;
      for (const auto& m : result.vertices) moved += m.floats_sent;
      moved = test::sum_over_ranks(comm, moved);
      if (p == R) {
        EXPECT_LE(static_cast<double>(moved), plan.total_cost);
      }
      if (p >= R) {
        EXPECT_GT(result.traffic.tuples, 0) << "rank " << comm.rank() << " computed nothing";
      }
      if (R > 1 && p == R) {
        EXPECT_GT(moved, 0);
      }
    }
}

// Operands moved by synthesized collectives wherever the layouts are distributed types on the ranks (the
// policy `collectives`), reductions deferred to them (a reduce-scatter in the reader's transition), and the
// automatic choice: every output block against the reference, every rank's traffic and block bytes against
// the dry run, on graphs whose intermediates feed one reader, under every planner at p = R.
// Graphs whose intermediates feed one reader: chains of products in f64 and f32, and products, maxima and
// minima of a chain.
std::vector<Graph> one_reader_graphs() {
  std::vector<Graph> graphs;
  graphs.emplace_back().output(builders::matrix_chain_program(graphs.back(), 64, false, Dtype::f64));
  graphs.emplace_back().output(builders::matrix_chain_program(graphs.back(), 40, true, Dtype::f32));
  graphs.push_back(parse_graph(R"(input A f64[32,48]
input B f64[48,16]
input C f64[16,24]
input D f64[24,8,4]
T = einsum("ij,jk->ik", A, B)
U = einsum("ik,kl->il", T, C)
m = einsum("il->l", U, agg=max)
V = einsum("il,lab->bai", U, D)
W = einsum("bai->ab", V, agg=min)
output m, W
)",
                               "chain.ein"));
  return graphs;
}

TEST(TEST_CATEGORY, CollectiveTransitionsAndDeferredReductions) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size();
  int collectives = 0, deferred = 0;
  for (const Graph& g : one_reader_graphs())
    for (const std::string planner : {"eindecomp", "sqrt", "data", "greedy"})
      for (auto policy : {engine::TransitionPolicy::collectives, engine::TransitionPolicy::automatic}) {
        SCOPED_TRACE(planner + " " + std::string(engine::transition_policy_name(policy)) + "\n" + print_graph(g));
        const partition::Plan plan = partition::make_plan(g, partition::procs_for_ranks(R), planner);
        const bool f32 = g.vertex(0).dtype == Dtype::f32;
        if (f32)
          check_engine<float>(comm, g, plan.partitions, 11, 1e-4, -1, 1, policy);
        else
          check_engine<double>(comm, g, plan.partitions, 11, 1e-11, -1, 1, policy);
        const engine::Schedule schedule(g, plan.partitions, R, policy);
        for (VertexId v = 0; v < g.size(); ++v) {
          if (g.vertex(v).is_input()) continue;
          deferred += schedule.deferred(v);
          for (std::size_t k = 0; k < g.vertex(v).inputs.size(); ++k)
            collectives +=
                !schedule.shared_operand(v, k) && schedule.transition(v, k).path == engine::TransitionPath::collectives;
        }
      }
  if (R > 1) {
    EXPECT_GT(collectives, 0);
    EXPECT_GT(deferred, 0);
  }
}

// An execution makes the agreements on failure the dry run counts (engine::failure_agreements): one for its
// checks, one per EinSum vertex (whether its reduction moves partials or not: at R > 1 some do), one at the end,
// and one per step of a collective sequence.
TEST(TEST_CATEGORY, AgreementsAreTheOnesTheDryRunCounts) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size();
  std::vector<Graph> graphs = one_reader_graphs();
  graphs.push_back(parse_graph(
      "input A f64[16,12]\ninput B f64[12,8]\nC = einsum(\"ij,jk->ik\", A, B)\nD = softmax(C)\noutput D\n", "f.ein"));
  int moving = 0;
  for (const Graph& g : graphs)
    for (const std::string planner : {"eindecomp", "data"})
      for (auto policy : {engine::TransitionPolicy::collectives, engine::TransitionPolicy::point_to_point})
        for (Extent procs : {Extent{1}, partition::procs_for_ranks(R), Extent{4} * R}) {
          SCOPED_TRACE(planner + " " + std::to_string(procs) + " " +
                       std::string(engine::transition_policy_name(policy)) + "\n" + print_graph(g));
          const engine::Schedule schedule(g, partition::make_plan(g, procs, planner).partitions, R, policy);
          const std::uint64_t before = einrel::comm::agreements_made();
          if (g.vertex(0).dtype == Dtype::f32)
            test::execute_once(TEST_EXECSPACE{}, comm, g, schedule,
                               scatter<float>(comm, g, schedule, whole_inputs<float>(g, 3, -1, 1)));
          else
            test::execute_once(TEST_EXECSPACE{}, comm, g, schedule,
                               scatter<double>(comm, g, schedule, whole_inputs<double>(g, 3, -1, 1)));
          EXPECT_EQ(static_cast<Extent>(einrel::comm::agreements_made() - before),
                    engine::failure_agreements(g, schedule));
          for (VertexId v = 0; v < g.size(); ++v)
            moving += !g.vertex(v).is_input() && R > 1 && !schedule.deferred(v) && schedule.vertex(v).group_size() > 1;
        }
  if (R > 1) {
    EXPECT_GT(moving, 0);
  }
}

// Two partial results combined element-wise before one reduction (Schedule::on_partials): sums, maxima and
// products, with the inner labels cut p = R ways (the last vertex's output cut p ways too, in two rows when p is
// even and at least 4, into even tiles): combined at any R > 1, and checked against the reference at any R.
TEST(TEST_CATEGORY, PartialResultsCombinedBeforeOneReduction) {
  const Communicator comm(MPI_COMM_WORLD);
  const Extent R = comm.size(), p = partition::procs_for_ranks(comm.size());
  const Extent rows = p >= 4 && p % 2 == 0 ? 2 : 1, cols = p / rows;
  for (const auto& [agg, join, lo] :
       {std::tuple{"sum", "add", -1.0}, std::tuple{"max", "max", -1.0}, std::tuple{"prod", "mul", 0.9}}) {
    const Graph g = parse_graph(
        std::string("input A f64[8,") + std::to_string(4 * p) + "]\ninput B f64[" + std::to_string(4 * p) + "," +
            std::to_string(4 * p) + "]\ninput C f64[8," + std::to_string(2 * p) + "]\ninput D f64[" +
            std::to_string(2 * p) + "," + std::to_string(4 * p) + "]\nP = einsum(\"ij,jk->ik\", A, B, agg=" + agg +
            ")\nQ = einsum(\"ij,jk->ik\", C, D, agg=" + agg + ")\nY = einsum(\"ik,ik->ik\", P, Q, join=" + join +
            ")\nW = einsum(\"ik->ik\", Y, map=tanh)\noutput W\n",
        "partials.ein");
    const std::vector<PartitionVector> plan{{},
                                            {},
                                            {},
                                            {},
                                            PartitionVector("ijk", {1, p, 1}),
                                            PartitionVector("ijk", {1, p, 1}),
                                            PartitionVector("ik", {rows, cols}),
                                            PartitionVector("ik", {rows, cols})};
    for (auto policy : {engine::TransitionPolicy::collectives, engine::TransitionPolicy::automatic,
                        engine::TransitionPolicy::point_to_point}) {
      SCOPED_TRACE(std::string(agg) + " " + std::string(engine::transition_policy_name(policy)));
      check_engine<double>(comm, g, plan, 13, 1e-11, lo, 1.0, policy);
      if (R > 1) {
        EXPECT_EQ(engine::Schedule(g, plan, static_cast<int>(R), policy).on_partials(*g.find("Y")),
                  policy != engine::TransitionPolicy::point_to_point);
      }
    }
  }
}

// A transformer layer from the builders, planned by every planner for several p.
TEST(TEST_CATEGORY, TransformerLayerUnderEveryPlanner) {
  const Communicator comm(MPI_COMM_WORLD);
  Graph g;
  const auto x = g.input("X", Dtype::f32, {8, 6});
  g.output(builders::transformer_layer(g, x, {8, 6, 2, 3}, 10, "L_"));
  ASSERT_EQ(partition::planners_for(g), partition::planner_names());
  for (const std::string& planner : partition::planner_names())
    for (Extent p : {1, 2, 8, 64}) {
      SCOPED_TRACE(planner + " p=" + std::to_string(p));
      check_engine<float>(comm, g, partition::make_plan(g, p, planner).partitions, 9, 1e-5, -0.5, 0.5);
    }
}

// A plan that cuts a label into more parts than its extent, or does not name the vertex's labels, is
// refused when the schedule is made, before anything runs.
TEST(TEST_CATEGORY, InvalidPlansAreRefused) {
  const Graph g =
      parse_graph("input A f64[9,13]\ninput B f64[13,6]\nT = einsum(\"ij,jk->ik\", A, B)\noutput T\n", "bad.ein");
  std::vector<PartitionVector> plan(g.size());
  plan[2] = PartitionVector("ijk", {16, 1, 1});
  EXPECT_THROW(engine::Schedule(g, plan, 2), Error);
  plan[2] = PartitionVector("ik", {1, 1});
  EXPECT_THROW(engine::Schedule(g, plan, 2), Error);
}

// prod as ⊕ on positive values, cut along the aggregated label.
TEST(TEST_CATEGORY, ProductAggregationAcrossRanks) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph("input A f64[6,40]\nr = einsum(\"ij->i\", A, agg=prod)\noutput r\n", "prod.ein");
  std::vector<PartitionVector> plan(g.size());
  plan[1] = PartitionVector("ij", {2, 8});
  check_engine<double>(comm, g, plan, 3, 1e-12, 0.9, 1.1);
}

// The engine cost model against the dry run at p = R: what the engine delivers (floats sent + the copies of
// inputs beyond one, read again rather than sent) is at least the prediction, and equal when every producer
// block sits on a rank that reads it, as in eindecomp's plans of the benchmark chain (eindecomp.txt §9) at
// p = 2 and 4. (Keeping an edge's partition is not enough: the sqrt plans at p = 8 and 16 number the
// consumer's tuples so that some blocks land away from their readers.) The model counts the point-to-point
// exchange and the reduction on the owners: collectives (a deferred reduction's reduce-scatter) move less.
TEST(TEST_CATEGORY, EngineCostModelIsTheDryRunOnChains) {
  std::vector<Graph> graphs(4);
  graphs[0].output(builders::matrix_chain_program(graphs[0], 64, false, Dtype::f64));
  graphs[1].output(builders::matrix_chain_program(graphs[1], 80, true, Dtype::f64));
  graphs[2].output(builders::matrix_chain(graphs[2], {64, 8, 256, 16, 128, 32}, Dtype::f64));
  graphs[3].output(builders::matrix_chain(graphs[3], {512, 512, 64, 512}, Dtype::f32));
  for (std::size_t i = 0; i < graphs.size(); ++i)
    for (Extent p : {2, 4, 8, 16})
      for (const std::string planner : {"eindecomp", "sqrt", "data", "greedy"}) {
        SCOPED_TRACE(planner + " p=" + std::to_string(p));
        const Graph& g = graphs[i];
        const partition::Plan plan = partition::make_plan(g, p, planner, partition::CostModel::engine);
        const engine::Traffic dry = engine::dry_run(
            g, engine::Schedule(g, plan.partitions, static_cast<int>(p), engine::TransitionPolicy::point_to_point));
        double delivered = 0;  // network floats + input copies beyond one
        for (Extent moved : dry.floats_moved) delivered += static_cast<double>(moved);

        for (VertexId v = 0; v < g.size(); ++v) {
          const Vertex& vertex = g.vertex(v);
          if (vertex.is_input()) continue;
          const partition::PartitionVector& d = plan.partitions[v];
          for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
            const Vertex& in = g.vertex(vertex.inputs[k]);
            const std::vector<Extent> wanted = d.project(vertex.einsum->inputs[k]);
            if (in.is_input()) {
              double size = 1, blocks = 1;
              for (std::size_t j = 0; j < wanted.size(); ++j) {
                size *= static_cast<double>(in.bound[j]);
                blocks *= static_cast<double>(wanted[j]);
              }
              delivered += size * (static_cast<double>(d.num_join_results()) / blocks - 1);
            }
          }
        }
        EXPECT_GE(delivered, plan.total_cost * (1 - 1e-9));
        if (planner == "eindecomp" && i < 2 && p <= 4) {
          EXPECT_NEAR(delivered, plan.total_cost, 1e-9 * plan.total_cost);
        }
      }
}

// With p = R > 1 no rank holds every block of an operand cut into several, and the measured peak is
// below the single-rank one.
TEST(TEST_CATEGORY, NoRankHoldsAWholeOperand) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size();
  if (R == 1) GTEST_SKIP() << "needs p = R > 1";
  const Graph g =
      parse_graph("input A f64[64,64]\ninput B f64[64,64]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n", "mm.ein");
  const partition::Plan plan = partition::make_plan(g, R, "eindecomp");
  const engine::Schedule schedule(g, plan.partitions, R);
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& layout = schedule.vertex(2).operand_layout(k);
    if (layout.grid().num_blocks() > 1) {
      EXPECT_LT(static_cast<Extent>(layout.blocks_of(comm.rank()).size()), layout.grid().num_blocks());
    }
  }
  const auto result = check_engine<double>(comm, g, plan.partitions, 4, 1e-12);
  EXPECT_LT(result.traffic.peak_block_bytes, 3u * 64 * 64 * 8);
}

// A layer whose bias-and-ReLU and scaling vertices can overwrite the product they read, and whose last
// contraction packs its result (a kernel temporary).
const char* const in_place_graph = R"(input X f64[24,20]
input W f64[20,32]
input b f64[32]
input V f64[32,3,5]
XW = einsum("sa,af->sf", X, W)
H = einsum("sf,f->sf", XW, b, join=add, map=relu)
S = einsum("sf->sf", H, map=scale(0.5))
Y = einsum("sf,fcd->dcs", S, V)
output Y
)";

// Calls f(g, schedule, whole inputs, pool) for the memory cases: the skewed chain and in_place_graph under
// three planners at p = R and 2R, with automatic and with forced collective transitions, with the pool emptied
// of free buffers and its statistics reset.
template <class F>
void for_each_memory_case(int R, F&& f) {
  Graph chain;
  chain.output(builders::matrix_chain_program(chain, 40, true, Dtype::f64));
  for (const Graph& g : {chain, parse_graph(in_place_graph, "layer.ein")})
    for (const std::string planner : {"eindecomp", "sqrt", "data"})
      for (Extent p : {partition::procs_for_ranks(R), 2 * partition::procs_for_ranks(R)})
        for (auto policy : {engine::TransitionPolicy::automatic, engine::TransitionPolicy::collectives}) {
          SCOPED_TRACE(planner + " p=" + std::to_string(p) + " " + std::string(engine::transition_policy_name(policy)) +
                       "\n" + print_graph(g));
          const engine::Schedule schedule(g, partition::make_plan(g, p, planner).partitions, R, policy);
          const Values whole = whole_inputs<double>(g, 5, -1, 1);
          auto& pool = BlockPool<TEST_MEMSPACE>::instance();
          pool.release_unused();
          pool.reset_statistics();
          f(g, schedule, whole, pool);
        }
}

// After engine::warm_memory, run before the inputs are loaded as `einrel run` does, loading the inputs and
// executing take every block and kernel temporary from the pool's cache and find the exchange's buffers
// grown: no fresh allocation, on plans that replicate, repartition, share producer blocks, reduce and
// write in place, with one or several tuples per rank, and the same results.
TEST(TEST_CATEGORY, WarmMemoryLeavesTheExecutionNothingToAllocate) {
  const Communicator comm(MPI_COMM_WORLD);
  for_each_memory_case(comm.size(), [&](const Graph& g, const engine::Schedule& schedule, const Values& whole,
                                        BlockPool<TEST_MEMSPACE>& pool) {
    redistribute::Exchange<TEST_MEMSPACE> exchange(comm);
    engine::warm_memory(TEST_EXECSPACE{}, exchange, g, schedule);
    const std::size_t buffers = exchange.buffer_capacity_bytes();
    const long long warm_allocations = pool.statistics().fresh_allocations;
    auto inputs = scatter<double>(comm, g, schedule, whole);
    const auto result = test::execute_once(TEST_EXECSPACE{}, exchange, g, schedule, std::move(inputs));
    EXPECT_EQ(pool.statistics().fresh_allocations, warm_allocations);
    EXPECT_GT(pool.statistics().reuses, 0);
    EXPECT_EQ(exchange.buffer_capacity_bytes(), buffers);
    expect_reference_outputs<double>(g, schedule, result, whole, 1e-11);
  });
}

// With the largest MPI message lowered to 1 and 7 elements, every exchange piece, partial block and synthesized
// collective's call goes as several (Options::max_message_elements; MPI counts are int, so blocks past 2^31
// elements take this path): the outputs are the reference's and the figures the dry run's, on random graphs and
// plans, with the transitions the schedule chooses and with collectives wherever they apply.
TEST(TEST_CATEGORY, MessagesSplitBelowTheLargestMessageArriveWhole) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 gen(37);
  for (int trial = 0; trial < 8; ++trial) {
    const Graph g = test::random_graph(gen, Dtype::f64);
    const auto policy = trial % 2 ? engine::TransitionPolicy::collectives : engine::TransitionPolicy::automatic;
    const engine::Schedule schedule(g, test::random_plan(g, gen), comm.size(), policy);
    const Values whole = whole_inputs<double>(g, 40 + trial, -1, 1);
    for (Extent largest : {1, 7}) {
      engine::PipelineOptions options;
      options.max_message_elements = largest;
      const auto result =
          test::execute_once(TEST_EXECSPACE{}, comm, g, schedule, scatter<double>(comm, g, schedule, whole), options);
      expect_reference_outputs<double>(g, schedule, result, whole, 1e-12);
      test::expect_dry_run_matches(comm, g, schedule, result);
    }
  }
}

// engine::prepare_messages sends the first message each way with every peer through a bounded number of receive
// buffers: with every other rank as a peer (an all-to-all transition's) and with ring neighbours, one, two and the
// default number at once complete on every rank (every send is posted before any wait); none at once is refused.
TEST(TEST_CATEGORY, FirstMessagesWithEveryPeerHoldFewBuffers) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size(), me = comm.rank();
  std::set<int> everyone, ring;
  for (int r = 0; r < R; ++r)
    if (r != me) everyone.insert(r);
  if (R > 1) ring = {(me + 1) % R, (me + R - 1) % R};
  for (std::size_t at_once : {std::size_t{1}, std::size_t{2}, engine::warm_receives_at_once}) {
    engine::prepare_messages(comm, everyone, at_once);
    engine::prepare_messages(comm, ring, at_once);
  }
  EXPECT_THROW(engine::prepare_messages(comm, everyone, 0), Error);
}

// The vendor BLAS' packing buffers are first-touched by engine::warm_memory, not inside the first timed GEMM:
// executing a product whose left operand has more rows than any GEMM this process ran before takes almost
// no page faults (without the warm-up: ~4000, the OpenBLAS panel of 16384 rows by 128 inner, 16 MiB).
TEST(TEST_CATEGORY, WarmMemoryTouchesTheVendorGemmWorkspace) {
  if (!Kokkos::SpaceAccessibility<TEST_EXECSPACE, Kokkos::HostSpace>::accessible)
    GTEST_SKIP() << "page faults of host memory";
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph(
      "input A f64[16384,128]\ninput B f64[128,32]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n", "tall.ein");
  const engine::Schedule schedule(g, partition::make_plan(g, 1, "eindecomp").partitions, comm.size());
  const Values whole = whole_inputs<double>(g, 3, -1, 1);
  redistribute::Exchange<TEST_MEMSPACE> exchange(comm);
  engine::warm_memory(TEST_EXECSPACE{}, exchange, g, schedule);
  auto inputs = scatter<double>(comm, g, schedule, whole);
  const engine::RankSteps steps = engine::rank_steps(g, schedule, comm.rank());
  auto minor_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  };
  const long before = minor_faults();
  const auto result = engine::execute(TEST_EXECSPACE{}, exchange, g, schedule, steps, std::move(inputs));
  EXPECT_LT(minor_faults() - before, 256);  // 1 MiB
  expect_reference_outputs<double>(g, schedule, result, whole, 1e-11);
}

// A step list keeps each exchange's plan: the warm-up makes it, every execution and every vertex of the step
// class reuse it (one object), and other limits make it anew; the results are the reference's each time.
TEST(TEST_CATEGORY, ExchangePlansAreMadeOncePerStepList) {
  const Communicator comm(MPI_COMM_WORLD);
  // Two products of one cut reading A·B's result in another layout: each of D and E exchanges C.
  const Graph g = parse_graph(R"(input A f64[24,20]
input B f64[20,28]
input W f64[28,16]
C = einsum("ij,jk->ik", A, B)
D = einsum("ik,kl->il", C, W)
E = einsum("ik,kl->il", C, W)
output D
output E
)",
                              "plans.ein");
  const int R = comm.size();
  const std::vector<partition::PartitionVector> cut{{},
                                                    {},
                                                    {},
                                                    partition::PartitionVector("ijk", {R, 1, 1}),
                                                    partition::PartitionVector("ikl", {1, R, 1}),
                                                    partition::PartitionVector("ikl", {1, R, 1})};
  const engine::Schedule schedule(g, cut, R, engine::TransitionPolicy::point_to_point);
  const Values whole = whole_inputs<double>(g, 11, -1, 1);
  redistribute::Exchange<TEST_MEMSPACE> exchange(comm);
  const engine::RankSteps steps = engine::rank_steps(g, schedule, comm.rank());
  std::vector<const engine::OperandSteps*> exchanged;  // C's moves to D and E, if the class is shared
  for (const engine::VertexSteps& v : steps.vertices)
    for (const engine::OperandSteps& op : v.work->operands)
      if (op.source == engine::OperandSource::exchange) exchanged.push_back(&op);
  ASSERT_FALSE(exchanged.empty());
  engine::warm_memory(TEST_EXECSPACE{}, exchange, g, schedule, steps);
  std::vector<const redistribute::RedistributionPlan*> made;
  for (const engine::OperandSteps* op : exchanged) {
    ASSERT_TRUE(op->exchange) << "the warm-up made no plan";
    made.push_back(op->exchange.get());
  }
  for (int run = 0; run < 2; ++run) {
    const auto result =
        engine::execute(TEST_EXECSPACE{}, exchange, g, schedule, steps, scatter<double>(comm, g, schedule, whole));
    expect_reference_outputs<double>(g, schedule, result, whole, 1e-11);
    for (std::size_t i = 0; i < exchanged.size(); ++i) EXPECT_EQ(exchanged[i]->exchange.get(), made[i]) << run;
  }
  engine::PipelineOptions smaller;
  smaller.max_message_elements = 3;
  const auto result = engine::execute(TEST_EXECSPACE{}, exchange, g, schedule, steps,
                                      scatter<double>(comm, g, schedule, whole), smaller);
  expect_reference_outputs<double>(g, schedule, result, whole, 1e-11);
  for (const engine::OperandSteps* op : exchanged) EXPECT_EQ(op->exchange->limits().max_message_elements, 3);
}

// With no free buffers cached (so the pool frees what no block uses before each fresh allocation), what
// the pool and the exchange hold at their peaks over the warm-up, the inputs and the execution is the dry
// run's estimate of this rank's memory, to within 10 % (the exchange buffers are estimated from each
// exchange's volumes per rank).
TEST(TEST_CATEGORY, MemoryEstimateIsWhatThePoolHolds) {
  const Communicator comm(MPI_COMM_WORLD);
  auto& pool = BlockPool<TEST_MEMSPACE>::instance();
  const std::size_t cache_limit = pool.cache_limit();
  pool.set_cache_limit(0);
  for_each_memory_case(comm.size(), [&](const Graph& g, const engine::Schedule& schedule, const Values& whole,
                                        BlockPool<TEST_MEMSPACE>& pool) {
    const std::size_t whole_bytes = pool.statistics().bytes_held;  // `whole`, the test's own
    redistribute::Exchange<TEST_MEMSPACE> exchange(comm);
    engine::warm_memory(TEST_EXECSPACE{}, exchange, g, schedule);
    test::execute_once(TEST_EXECSPACE{}, exchange, g, schedule, scatter<double>(comm, g, schedule, whole));
    const double held =
        static_cast<double>(pool.statistics().peak_bytes_held - whole_bytes + exchange.buffer_capacity_bytes());
    const double estimate = static_cast<double>(engine::dry_run(g, schedule).peak_memory_bytes[comm.rank()]);
    EXPECT_LE(held, estimate);
    EXPECT_GE(held, 0.9 * estimate);
  });
  pool.set_cache_limit(cache_limit);
}

// An element-wise vertex whose first operand is an intermediate it alone reads, in its own layout, writes
// its result into that operand's blocks (Schedule::in_place): the same results and the dry run's figures,
// under every planner. Not in place: a graph output's blocks, an operand read twice.
TEST(TEST_CATEGORY, InPlaceVerticesOverwriteTheirOperand) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph(in_place_graph, "layer.ein");
  const VertexId h = *g.find("H"), s = *g.find("S");
  const int R = comm.size();
  for (const std::string& planner : partition::planners_for(g)) {
    SCOPED_TRACE(planner);
    const partition::Plan plan = partition::make_plan(g, partition::procs_for_ranks(R), planner);
    const engine::Schedule schedule(g, plan.partitions, R);
    if (planner == "eindecomp") {
      EXPECT_TRUE(schedule.in_place(h));
      EXPECT_TRUE(schedule.in_place(s));
    }
    EXPECT_FALSE(schedule.in_place(*g.find("Y")));
    check_engine<double>(comm, g, plan.partitions, 9, 1e-12);
  }
  // Softmax: the subtraction-and-exp overwrites the scores its max read before it, the division the exp.
  const Graph softmax =
      parse_graph("input A f64[12,10]\ninput B f64[10,16]\nT = einsum(\"ij,jk->ik\", A, B)\nS = softmax(T)\noutput S\n",
                  "softmax.ein");
  for (const std::string& planner : partition::planners_for(softmax)) {
    SCOPED_TRACE("softmax " + planner);
    const partition::Plan plan = partition::make_plan(softmax, partition::procs_for_ranks(R), planner);
    const engine::Schedule schedule(softmax, plan.partitions, R);
    const VertexId t = *softmax.find("T"), e = *softmax.find("S__exp");
    if (schedule.vertex(e).operand_layout(0) == schedule.layout(t) &&
        schedule.vertex(e).output_layout() == schedule.layout(t)) {
      EXPECT_TRUE(schedule.in_place(e));
    }
    check_engine<double>(comm, softmax, plan.partitions, 11, 1e-12);
  }
  const engine::Schedule whole_blocks(softmax, partition::make_plan(softmax, 1, "eindecomp").partitions, R);
  EXPECT_TRUE(whole_blocks.in_place(*softmax.find("S__exp")));
  EXPECT_TRUE(whole_blocks.in_place(*softmax.find("S")));
  const Graph kept = parse_graph(
      "input A f64[8,6]\ninput B f64[6,4]\nT = einsum(\"ij,jk->ik\", A, B)\nU = einsum(\"ij->ij\", T, map=exp)\n"
      "V = einsum(\"ij,ij->ij\", T, T, join=add)\noutput T, U, V\n",
      "kept.ein");
  const engine::Schedule schedule(kept, partition::make_plan(kept, 1, "eindecomp").partitions, R);
  EXPECT_FALSE(schedule.in_place(*kept.find("U")));
  EXPECT_FALSE(schedule.in_place(*kept.find("V")));
  check_engine<double>(comm, kept, partition::make_plan(kept, 1, "eindecomp").partitions, 10, 1e-12);
}

// A failure injected on one rank, or on every rank, in any phase of the engine ends the run on every rank with its
// message. Every vertex's kernels' failure waits for the next vertex's agreement or (D, the last) the one at the end
// of the execution; where C's reduction moves partials (j cut R ways), the failed rank stands in for its messages,
// whole or split (max_message_elements 5).
TEST(TEST_CATEGORY, InjectedFailureReachesEveryRank) {
  const Communicator comm(MPI_COMM_WORLD);
  const Graph g = parse_graph(
      "input A f64[16,12]\ninput B f64[12,8]\nC = einsum(\"ij,jk->ik\", A, B)\nD = softmax(C)\noutput D\n", "f.ein");
  const partition::Plan plan = partition::make_plan(g, 4, "eindecomp");
  std::vector<PartitionVector> split = plan.partitions;
  split[*g.find("C")] = PartitionVector("ijk", {1, comm.size(), 1});
  const engine::Schedule chosen(g, plan.partitions, comm.size());
  const engine::Schedule moving(g, split, comm.size(), engine::TransitionPolicy::point_to_point);
  EXPECT_EQ(moving.vertex(*g.find("C")).group_size(), comm.size());
  const Values whole = whole_inputs<double>(g, 1, -1, 1);
  std::vector<std::pair<std::string, engine::Phase>> where = {{"C", engine::Phase::redistribute}};
  for (VertexId v = 0; v < g.size(); ++v)
    if (!g.vertex(v).is_input())
      for (engine::Phase phase : {engine::Phase::kernels, engine::Phase::reduce})
        where.emplace_back(g.vertex(v).name, phase);
  for (const engine::Schedule* schedule : {&chosen, &moving})
    for (Extent largest_message : {Extent{INT_MAX}, Extent{5}})
      for (int rank : {comm.size() - 1, 0, engine::FailureInjection::every_rank})
        for (const auto& [vertex, phase] : where) {
          SCOPED_TRACE(std::string(engine::phase_name(phase)) + " of " + vertex + " on rank " + std::to_string(rank) +
                       ", messages of " + std::to_string(largest_message) +
                       (schedule == &moving ? ", C's partials moving" : ""));
          engine::PipelineOptions options;
          options.failure = engine::FailureInjection{rank, vertex, phase};
          options.max_message_elements = largest_message;
          const int named = rank == engine::FailureInjection::every_rank ? 0 : rank;  // the lowest failing rank's
          try {
            test::execute_once(TEST_EXECSPACE{}, comm, g, *schedule, scatter<double>(comm, g, *schedule, whole),
                               options);
            ADD_FAILURE() << "no failure";
          } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("injected failure on rank " + std::to_string(named) + " at " +
                                                 engine::phase_name(phase) + " of '" + vertex + "'"),
                      std::string::npos)
                << e.what();
          }
        }
  // The communicator is still usable, no stand-in's message left over: clean runs follow.
  check_engine<double>(comm, g, plan.partitions, 2, 1e-12);
  check_engine<double>(comm, g, split, 3, 1e-12, -1.0, 1.0, engine::TransitionPolicy::point_to_point);
}

}  // namespace
