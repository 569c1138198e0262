// The library API: a graph planned once and executed many times on pieces in the host code's own
// decompositions (slabs, bricks that form no grid, a whole tensor on one rank), compared with the
// single-rank unpartitioned evaluation; errors agreed on every rank.
#include <einrel_Evaluator.hpp>
#include <einrel_Program.hpp>
#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <limits>

namespace {

using namespace einrel;

using Values = std::vector<std::optional<AnyTensor<TEST_MEMSPACE>>>;

// This process's rank in MPI_COMM_WORLD, and how many there are.
int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return ranks;
}

// A brick-wall cover of a 2-D bound: `bands` bands of rows, each cut into columns at offsets that shift from
// band to band (so the bricks form no grid), bricks dealt to the ranks round robin from `first`.
std::vector<std::vector<Box>> bricks(const Bound& b, int ranks, Extent bands, int first) {
  std::vector<std::vector<Box>> boxes(ranks);
  int next = first;
  for (Extent band = 0; band < bands; ++band) {
    const Extent lo = b[0] * band / bands, hi = b[0] * (band + 1) / bands;
    const Extent shift = 1 + band % 3;
    std::vector<Extent> cuts{0};
    for (Extent c = shift; c < b[1]; c += 4 + band % 2) cuts.push_back(c);
    cuts.push_back(b[1]);
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
      boxes[next++ % ranks].push_back(Box{{lo, cuts[k]}, {hi, cuts[k + 1]}});
  }
  return boxes;
}

// Rows [n·r/R, n·(r+1)/R) on rank r.
std::vector<Box> row_slab(const Bound& b, int rank, int ranks) {
  Box box{std::vector<Extent>(b.size(), 0), b};
  box.lo[0] = b[0] * rank / ranks;
  box.hi[0] = b[0] * (rank + 1) / ranks;
  return {box};
}

// The pieces of `whole` (a host vector in C order over `bound`) in `boxes`, each in its own view (kept in
// `storage`, which must outlive the pieces).
template <class Scalar>
std::vector<LocalPiece<Scalar, TEST_MEMSPACE>> pieces_of(const std::vector<Scalar>& whole, const Bound& bound,
                                                         const std::vector<Box>& boxes,
                                                         std::vector<Tensor<Scalar, TEST_MEMSPACE>>& storage) {
  std::vector<LocalPiece<Scalar, TEST_MEMSPACE>> pieces;
  for (const Box& box : boxes) {
    std::vector<Scalar> values;
    test::for_each_element(box, bound, std::vector<Extent>(box.lo.size(), 0),
                           [&](Extent flat) {  // zeros where an error test's box leaves the bound
                             values.push_back(flat < static_cast<Extent>(whole.size()) ? whole[flat] : Scalar(0));
                           });
    storage.push_back(tensor_from_host<TEST_MEMSPACE>("piece", box.extents(), values));
    pieces.push_back({box, typename LocalPiece<Scalar, TEST_MEMSPACE>::view_type(storage.back().view().data(),
                                                                                 storage.back().size())});
  }
  return pieces;
}

// C = A B (f64), A and B inputs, C the output.
Graph product_graph(const Bound& a_bound, const Bound& b_bound) {
  Graph g;
  const auto a = g.input("A", Dtype::f64, a_bound);
  const auto b = g.input("B", Dtype::f64, b_bound);
  EinsumOptions named;
  named.name = "C";
  g.output(g.einsum("ij,jk->ik", a, b, named));
  return g;
}

// Every element of `pieces` equals `expected` (the whole tensor) there.
template <class Scalar>
void expect_pieces(const std::vector<LocalPiece<Scalar, TEST_MEMSPACE>>& pieces, const Bound& bound,
                   const std::vector<double>& expected, double tol) {
  for (const auto& p : pieces) {
    const Tensor<Scalar, TEST_MEMSPACE> t(
        p.box.extents(), typename Tensor<Scalar, TEST_MEMSPACE>::view_type(p.data.data(), p.data.size()));
    std::vector<double> want;
    test::for_each_element(p.box, bound, std::vector<Extent>(p.box.lo.size(), 0),
                           [&](Extent flat) { want.push_back(expected[flat]); });
    test::expect_all_close(tensor_to_host(t), want, tol);
  }
}

// `largest_message`: Options::max_message_elements (the gather of the boxes in rounds below INT_MAX).
template <class Scalar>
void slabs_and_bricks(double tol, Extent largest_message = INT_MAX) {
  const int rank = world_rank(), ranks = world_size();
  const Dtype dtype = dtype_of<Scalar>();
  const Bound a_bound{23, 17}, b_bound{17, 19}, t_bound{23, 19};
  Graph g;
  const auto a = g.input("A", dtype, a_bound);
  const auto b = g.input("B", dtype, b_bound);
  EinsumOptions named;
  named.name = "T";
  const auto t = g.einsum("ij,jk->ik", a, b, named);
  named.name = "r";
  named.agg = AggOp::max;
  const auto r = g.einsum("ik->i", t, named);
  g.output(t);
  g.output(r);
  engine::Options options;
  options.max_message_elements = largest_message;
  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g, options);

  auto a_values = test::random_values<Scalar>(a_bound, 1);
  const auto b_values = test::random_values<Scalar>(b_bound, 2);
  std::vector<Tensor<Scalar, TEST_MEMSPACE>> storage;
  // A in uneven row slabs, B in bricks, T back in bricks dealt differently, r whole on the last rank.
  const auto b_pieces = pieces_of(b_values, b_bound, bricks(b_bound, ranks, 4, 0)[rank], storage);
  const auto t_pieces = pieces_of(std::vector<Scalar>(23 * 19), t_bound, bricks(t_bound, ranks, 5, 1)[rank], storage);
  const auto r_pieces = pieces_of(std::vector<Scalar>(23), {23},
                                  rank == ranks - 1 ? std::vector<Box>{Box{{0}, {23}}} : std::vector<Box>{}, storage);
  program.set_input<Scalar>("B", b_pieces);
  program.set_output<Scalar>("T", t_pieces);
  program.set_output<Scalar>("r", r_pieces);
  for (int step = 0; step < 3; ++step) {
    // A changes between executions (new pieces over the same boxes).
    for (auto& x : a_values) x = static_cast<Scalar>(x * -1.5);
    program.set_input<Scalar>("A", pieces_of(a_values, a_bound, row_slab(a_bound, rank, ranks), storage));
    // The plan's predicted cost is the floats the engine moves (the plan is costed by its dry run).
    long long sent = static_cast<long long>(program.execute().traffic.floats_sent), moved = 0;
    MPI_Allreduce(&sent, &moved, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(static_cast<double>(moved), program.plan().total_cost);
    Values whole(g.size());
    whole[a] = tensor_from_host<TEST_MEMSPACE>("A", a_bound, a_values);
    whole[b] = tensor_from_host<TEST_MEMSPACE>("B", b_bound, b_values);
    const auto reference = evaluate_unpartitioned(TEST_EXECSPACE{}, g, whole);
    const auto t_want = tensor_to_host(std::get<Tensor<Scalar, TEST_MEMSPACE>>(*reference.values[t]));
    const auto r_want = tensor_to_host(std::get<Tensor<Scalar, TEST_MEMSPACE>>(*reference.values[r]));
    SCOPED_TRACE("step " + std::to_string(step));
    expect_pieces(t_pieces, t_bound, std::vector<double>(t_want.begin(), t_want.end()), tol);
    expect_pieces(r_pieces, {23}, std::vector<double>(r_want.begin(), r_want.end()), tol);
    // The output in einrel's own layout too.
    for (const auto& [key, block] : program.template output<Scalar>("T").local()) {
      const Box box = program.template output<Scalar>("T").grid().box(key);
      std::vector<double> want;
      test::for_each_element(box, t_bound, std::vector<Extent>(2, 0),
                             [&](Extent flat) { want.push_back(t_want[flat]); });
      test::expect_all_close(tensor_to_host(block), want, tol);
    }
  }
  EXPECT_EQ(program.executions(), 3);
}

// A memory limit below the attention scores' own size: the program runs its graph with a label sliced
// (docs/planner.md "Slicing"), in the pieces the host code gave for the graph's own inputs and outputs, and
// computes what the graph does.
TEST(TEST_CATEGORY, AMemoryLimitBelowTheScoresSlicesThem) {
  const int rank = world_rank(), ranks = world_size();
  const Bound qkv{128, 8};
  Graph g;
  const auto q = g.input("Q", Dtype::f64, qkv);
  const auto k = g.input("K", Dtype::f64, qkv);
  const auto v = g.input("V", Dtype::f64, qkv);
  EinsumOptions named;
  named.name = "T";
  const auto t = g.einsum("sd,td->st", q, k, named);
  named.name = "O";
  const auto o = g.einsum("st,td->sd", g.softmax(t, "P"), v, named);
  g.output(o);
  std::size_t unsliced = 0;
  {
    Program<TEST_EXECSPACE> whole(MPI_COMM_WORLD, g);
    for (std::size_t b : whole.estimate().peak_memory_bytes) unsliced = std::max(unsliced, b);
  }
  engine::Options options;
  options.memory_limit = unsliced * 3 / 4;  // the scores alone: 128 KiB of it, a share per rank
  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g, options);
  EXPECT_GT(program.plan().partitions.size(), g.size()) << "the plan sliced nothing";
  for (std::size_t b : program.estimate().peak_memory_bytes) EXPECT_LE(b, *options.memory_limit);
  std::vector<Tensor<double, TEST_MEMSPACE>> storage;
  const auto o_pieces = pieces_of(std::vector<double>(128 * 8), qkv, row_slab(qkv, ranks - 1 - rank, ranks), storage);
  Values whole(g.size());
  for (VertexId in : {q, k, v}) {
    const auto values = test::random_values<double>(qkv, static_cast<unsigned>(in) + 5);
    program.set_input<double>(g.vertex(in).name, pieces_of(values, qkv, row_slab(qkv, rank, ranks), storage));
    whole[in] = tensor_from_host<TEST_MEMSPACE>(g.vertex(in).name, qkv, values);
  }
  program.set_output<double>("O", o_pieces);
  program.execute();
  const auto reference = evaluate_unpartitioned(TEST_EXECSPACE{}, g, whole);
  const auto want = tensor_to_host(std::get<Tensor<double, TEST_MEMSPACE>>(*reference.values[o]));
  expect_pieces(o_pieces, qkv, std::vector<double>(want.begin(), want.end()), 1e-12);
}

TEST(TEST_CATEGORY, SlabsAndBricksInAndOutF64) { slabs_and_bricks<double>(1e-13); }
TEST(TEST_CATEGORY, SlabsAndBricksInAndOutF32) { slabs_and_bricks<float>(1e-5); }
// Every message of at most 3 values: the boxes gathered in rounds (comm::allgather_varying), the exchanges and
// reductions split.
TEST(TEST_CATEGORY, SlabsAndBricksInMessagesOfThreeValues) { slabs_and_bricks<double>(1e-13, 3); }

// A sparse input's pieces that leave blocks uncovered give its shape (docs/sparse.md): the graph is planned at
// the first execute, the uncovered cells are absent, and the outputs (one sparse, one dense) equal the
// evaluation of the dense equivalent; a dense input's pieces must still cover it.
TEST(TEST_CATEGORY, SparsePiecesGiveTheShape) {
  const int rank = world_rank(), ranks = world_size();
  const Bound a_bound{24, 18}, b_bound{18, 10};
  Graph g;
  const auto a = g.sparse_input("A", Dtype::f64, a_bound);
  const auto b = g.input("B", Dtype::f64, b_bound);
  EinsumOptions named;
  named.name = "T";
  const auto t = g.einsum("ij,jk->ik", a, b, named);
  named.name = "U";
  named.join = JoinOp::add;
  const auto u = g.einsum("ik,ik->ik", t, t, named);  // computed dense
  g.output(t);
  g.output(u);
  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g);
  EXPECT_FALSE(program.planned());
  EXPECT_THROW(program.plan(), Error);
  // A's 6×6 tiles (4×3 of them); the tiles (i, j) with (i + 2j) % 3 == 0 are held, round robin over the ranks.
  std::vector<Box> mine;
  std::vector<double> a_values = test::random_values<double>(a_bound, 3);
  int next = 0;
  for (Extent i = 0; i < 4; ++i)
    for (Extent j = 0; j < 3; ++j) {
      const Box tile{{6 * i, 6 * j}, {6 * i + 6, 6 * j + 6}};
      if ((i + 2 * j) % 3 != 0) {
        test::for_each_element(tile, a_bound, std::vector<Extent>(2, 0), [&](Extent flat) { a_values[flat] = 0; });
        continue;
      }
      if (next++ % ranks == rank) mine.push_back(tile);
    }
  const auto b_values = test::random_values<double>(b_bound, 4);
  std::vector<Tensor<double, TEST_MEMSPACE>> storage;
  program.set_input<double>("A", pieces_of(a_values, a_bound, mine, storage));
  program.set_input<double>("B", pieces_of(b_values, b_bound, row_slab(b_bound, rank, ranks), storage));
  const auto t_pieces = pieces_of(std::vector<double>(24 * 10), {24, 10}, row_slab({24, 10}, rank, ranks), storage);
  const auto u_pieces = pieces_of(std::vector<double>(24 * 10), {24, 10}, row_slab({24, 10}, rank, ranks), storage);
  program.set_output<double>("T", t_pieces);
  program.set_output<double>("U", u_pieces);
  for (int step = 0; step < 2; ++step) {
    program.execute();
    ASSERT_TRUE(program.planned());
    ASSERT_TRUE(program.schedule().shape(a).has_value());
    EXPECT_EQ(program.schedule().shape(a)->num_present(), 4);  // 12 tiles, (i + 2j) % 3 == 0 in 4
    EXPECT_TRUE(program.schedule().shape(t).has_value());
    Values whole(g.size());
    whole[a] = tensor_from_host<TEST_MEMSPACE>("A", a_bound, a_values);
    whole[b] = tensor_from_host<TEST_MEMSPACE>("B", b_bound, b_values);
    const auto reference = evaluate_unpartitioned(TEST_EXECSPACE{}, g, whole);
    const auto t_want = tensor_to_host(std::get<Tensor<double, TEST_MEMSPACE>>(*reference.values[t]));
    const auto u_want = tensor_to_host(std::get<Tensor<double, TEST_MEMSPACE>>(*reference.values[u]));
    expect_pieces(t_pieces, {24, 10}, std::vector<double>(t_want.begin(), t_want.end()), 1e-13);
    expect_pieces(u_pieces, {24, 10}, std::vector<double>(u_want.begin(), u_want.end()), 1e-13);
  }
  // B is dense: pieces that leave a hole are an error on every rank.
  Program<TEST_EXECSPACE> dense(MPI_COMM_WORLD, g);
  dense.set_input<double>("A", pieces_of(a_values, a_bound, mine, storage));
  dense.set_input<double>(
      "B", pieces_of(b_values, b_bound, rank == 0 ? std::vector<Box>{} : row_slab(b_bound, rank, ranks), storage));
  EXPECT_THROW(dense.execute(), Error);
}

// Errors are thrown on every rank with the same message, and the Program stays usable where it can.
TEST(TEST_CATEGORY, CoverAndBindingErrors) {
  const int rank = world_rank(), ranks = world_size();
  Graph g;
  const auto x = g.input("X", Dtype::f64, {8, 6});
  EinsumOptions named;
  named.name = "Y";
  g.output(g.einsum("ij->ji", x, named));
  std::vector<Tensor<double, TEST_MEMSPACE>> storage;
  const std::vector<double> values = test::random_values<double>({8, 6}, 3);
  auto expect_error = [&](const std::vector<Box>& mine, const std::string& what) {
    Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g);
    program.set_input<double>("X", pieces_of(values, {8, 6}, mine, storage));
    const std::string message = test::error_of([&] { program.execute(); });
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  // Rank 0 also claims the first row of the last rank's slab (on one rank: two boxes overlapping).
  std::vector<Box> overlapping = row_slab({8, 6}, rank, ranks);
  if (rank == 0) overlapping.push_back(Box{{7, 0}, {8, 6}});
  expect_error(overlapping, "overlaps");
  // The last row belongs to nobody.
  std::vector<Box> gap = row_slab({8, 6}, rank, ranks);
  if (rank == ranks - 1) gap[0].hi[0] = 7;
  expect_error(gap, "the pieces of 'X': the boxes do not cover bound [8,6]: no rank holds point [7,0]");
  expect_error({Box{{0, 0}, {9, 6}}}, "is not inside bound [8,6]");

  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g);
  EXPECT_NE(test::error_of([&] { program.set_input<double>("Z", {}); }).find("the graph has no tensor 'Z'"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { program.set_input<float>("X", {}); }).find("'X' is f64, not f32"), std::string::npos);
  EXPECT_NE(test::error_of([&] { program.set_output<double>("X", {}); }).find("is an input, not an output"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { program.execute(); }).find("input 'X' has no pieces on rank"), std::string::npos);
  program.set_input<double>("X", pieces_of(values, {8, 6}, row_slab({8, 6}, rank, ranks), storage));
  program.execute();
  // Other boxes after the first execution: refused on every rank, even if only the last rank changed.
  std::vector<Box> other = row_slab({8, 6}, rank, ranks);
  if (rank == ranks - 1) other = {Box{other[0].lo, {other[0].hi[0], 3}}, Box{{other[0].lo[0], 3}, other[0].hi}};
  program.set_input<double>("X", pieces_of(values, {8, 6}, other, storage));
  EXPECT_NE(test::error_of([&] { program.execute(); }).find("cover other boxes than at the first execution"),
            std::string::npos);
  EXPECT_EQ(program.executions(), 1);
}

// Kokkos allocations in any memory space, counted through the Kokkos Tools allocation callback:
// independent of einrel's pool and its statistics.
long long kokkos_allocations = 0;

// A time loop: after the first execution, 99 more make no Kokkos allocation at all (blocks, partials,
// kernel temporaries, exchange buffers), on slabs in and bricks out, through contractions, a softmax
// and reductions.
// last_report: every rank's figures of the last execution, the same on every rank, checked against what
// each rank's EngineResult says and against NaN and ±Inf planted in an input.
// A first execution that fails on a binding error (an output bound on some ranks only) leaves the program
// usable: bound right, the next execution runs and writes every piece (it failed with "duplicate key" at
// R >= 2, the bindings prepared before the error being prepared again).
TEST(TEST_CATEGORY, AFailedFirstExecutionCanBeRetried) {
  const int rank = world_rank(), ranks = world_size();
  const Bound a_bound{11, 7}, b_bound{7, 5}, c_bound{11, 5};
  const Graph g = product_graph(a_bound, b_bound);
  const VertexId a = *g.find("A"), b = *g.find("B"), c = *g.find("C");
  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g);
  const auto a_values = test::random_values<double>(a_bound, 3);
  const auto b_values = test::random_values<double>(b_bound, 4);
  std::vector<Tensor<double, TEST_MEMSPACE>> storage;
  program.set_input<double>("A", pieces_of(a_values, a_bound, row_slab(a_bound, rank, ranks), storage));
  program.set_input<double>("B", pieces_of(b_values, b_bound, row_slab(b_bound, rank, ranks), storage));
  const auto c_pieces = pieces_of(std::vector<double>(11 * 5), c_bound, row_slab(c_bound, rank, ranks), storage);
  if (ranks > 1) {
    if (rank == 0) program.set_output<double>("C", c_pieces);
    EXPECT_THROW(program.execute(), Error);
    EXPECT_EQ(program.executions(), 0);
  }
  program.set_output<double>("C", c_pieces);
  program.execute();
  Values whole(g.size());
  whole[a] = tensor_from_host<TEST_MEMSPACE>("A", a_bound, a_values);
  whole[b] = tensor_from_host<TEST_MEMSPACE>("B", b_bound, b_values);
  const auto reference = evaluate_unpartitioned(TEST_EXECSPACE{}, g, whole);
  const auto c_want = tensor_to_host(std::get<Tensor<double, TEST_MEMSPACE>>(*reference.values[c]));
  expect_pieces(c_pieces, c_bound, std::vector<double>(c_want.begin(), c_want.end()), 1e-13);
  EXPECT_EQ(program.executions(), 1);
}

TEST(TEST_CATEGORY, LastReportGathersEveryRank) {
  const int rank = world_rank(), ranks = world_size();
  const Bound a_bound{12, 6}, b_bound{6, 5};
  const Graph g = product_graph(a_bound, b_bound);
  const VertexId c = *g.find("C");
  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g);
  EXPECT_THROW(program.last_report(), Error);
  EXPECT_EQ(program.fitted().plan.partitions, program.plan().partitions);
  EXPECT_FALSE(program.fitted().proposed_by.empty());
  EXPECT_GT(program.fitted().estimated_seconds(), 0);
  auto a_values = test::random_values<double>(a_bound, 7);
  const auto b_values = test::random_values<double>(b_bound, 8, 0.5, 1.0);  // no zero: ±Inf · b stays ±Inf
  a_values[0] = std::numeric_limits<double>::quiet_NaN();                   // row 0 of C: 5 NaN
  a_values[6] = std::numeric_limits<double>::infinity();                    // row 1 of C: 5 +Inf
  std::vector<Tensor<double, TEST_MEMSPACE>> storage;
  program.set_input<double>("A", pieces_of(a_values, a_bound, row_slab(a_bound, rank, ranks), storage));
  program.set_input<double>("B", pieces_of(b_values, b_bound, bricks(b_bound, ranks, 2, 0)[rank], storage));
  const auto& result = program.execute();
  const engine::RankTraffic mine = result.traffic;
  const engine::ExecutionReport report = program.last_report();
  // Each rank's vertex times are the sum of their parts; the report's are the timed rank's, whose vertices
  // took longest in all.
  double my_seconds = 0, longest = 0;
  for (const auto& m : result.vertices) {
    for (double part : {m.read_seconds, m.exchange_seconds, m.kernel_seconds, m.reduce_seconds}) EXPECT_GE(part, 0);
    my_seconds += m.seconds();
  }
  MPI_Allreduce(&my_seconds, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_DOUBLE_EQ(report.evaluation_seconds(), longest);
  if (rank == report.timed_rank)
    for (VertexId v = 0; v < g.size(); ++v) {
      EXPECT_EQ(report.vertices[v].seconds(), result.vertices[v].seconds());
      EXPECT_EQ(report.vertices[v].kernel_seconds, result.vertices[v].kernel_seconds);
      EXPECT_EQ(report.vertices[v].exchange_seconds, result.vertices[v].exchange_seconds);
    }

  ASSERT_EQ(report.ranks.size(), static_cast<std::size_t>(ranks));
  ASSERT_EQ(report.peak_allocated_bytes.size(), static_cast<std::size_t>(ranks));
  EXPECT_EQ(report.ranks[rank].floats_sent, mine.floats_sent);
  EXPECT_EQ(report.ranks[rank].floats_received, mine.floats_received);
  EXPECT_EQ(report.ranks[rank].tuples, mine.tuples);
  EXPECT_EQ(report.ranks[rank].peak_block_bytes, mine.peak_block_bytes);
  EXPECT_GE(report.peak_allocated_bytes[rank], mine.peak_block_bytes);
  long long sent = mine.floats_sent, total = 0, tuples = mine.tuples, all_tuples = 0;
  MPI_Allreduce(&sent, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&tuples, &all_tuples, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(report.floats_moved(), total);
  EXPECT_EQ(report.vertices[c].floats_moved, total);  // C is the only vertex that moves anything
  EXPECT_GT(report.vertices[c].kernel_seconds, 0);
  Extent counted = 0;
  for (const auto& r : report.ranks) counted += r.tuples;
  EXPECT_EQ(counted, all_tuples);
  // The same report on every rank: rank 0's figures broadcast and compared.
  long long root[2] = {report.ranks[ranks - 1].floats_received, report.computing_ranks};
  MPI_Bcast(root, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  EXPECT_EQ(root[0], report.ranks[ranks - 1].floats_received);
  EXPECT_EQ(root[1], report.computing_ranks);
  ASSERT_EQ(report.nonfinite_outputs.size(), 1u);
  EXPECT_EQ(report.nonfinite_outputs[0].vertex, c);
  EXPECT_EQ(report.nonfinite_outputs[0].nan, 5);
  EXPECT_EQ(report.nonfinite_outputs[0].inf, 5);
}

TEST(TEST_CATEGORY, ATimeLoopAllocatesNothingAfterTheFirstExecution) {
  const int rank = world_rank(), ranks = world_size();
  const Bound x_bound{24, 16}, w_bound{16, 20};
  Graph g;
  const auto x = g.input("X", Dtype::f64, x_bound);
  const auto w = g.input("W", Dtype::f64, w_bound);
  const auto h = g.einsum("ij,jk->ik", x, w);
  EinsumOptions named;
  named.name = "P";
  const auto p = g.softmax(h, "P");
  named.name = "S";
  g.output(g.einsum("ik,jk->ij", p, h, named));
  g.output(p);
  Program<TEST_EXECSPACE> program(MPI_COMM_WORLD, g);
  std::vector<Tensor<double, TEST_MEMSPACE>> storage;
  const auto x_values = test::random_values<double>(x_bound, 5), w_values = test::random_values<double>(w_bound, 6);
  program.set_input<double>("X", pieces_of(x_values, x_bound, row_slab(x_bound, rank, ranks), storage));
  program.set_input<double>("W", pieces_of(w_values, w_bound, bricks(w_bound, ranks, 3, 0)[rank], storage));
  program.set_output<double>(
      "P", pieces_of(std::vector<double>(24 * 20), {24, 20}, bricks({24, 20}, ranks, 3, 1)[rank], storage));
  program.execute();

  kokkos_allocations = 0;
  Kokkos::Tools::Experimental::set_allocate_data_callback(
      [](Kokkos::Tools::SpaceHandle, const char*, const void*, uint64_t) { ++kokkos_allocations; });
  // The counter sees a deliberate allocation.
  { Kokkos::View<double*, TEST_MEMSPACE> probe("probe", 10); }
  EXPECT_EQ(kokkos_allocations, 1);
  kokkos_allocations = 0;
  const PoolStatistics before = BlockPool<TEST_MEMSPACE>::instance().statistics();
  for (int step = 1; step < 100; ++step) program.execute();
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  const PoolStatistics after = BlockPool<TEST_MEMSPACE>::instance().statistics();
  EXPECT_EQ(kokkos_allocations, 0);
  EXPECT_EQ(after.fresh_allocations, before.fresh_allocations);
  EXPECT_GT(after.reuses, before.reuses);
  EXPECT_EQ(program.executions(), 100);
}

TEST(TEST_CATEGORY, HostEnvironment) {
  // The tests initialize MPI with MPI_THREAD_FUNNELED on the main thread, as host codes should.
  EXPECT_EQ(required_mpi_thread_level(false), MPI_THREAD_SINGLE);
  EXPECT_EQ(required_mpi_thread_level(true), MPI_THREAD_FUNNELED);
  check_host_environment(true);
  // Every rank of these tests runs on one node: its node-local rank is its rank.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(node_local_rank(MPI_COMM_WORLD), rank);
}

TEST(TEST_CATEGORY, LocalPieceChecksTheView) {
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> v("v", 3, 4);
  const auto piece = local_piece(Box{{2, 0}, {5, 4}}, v);
  EXPECT_EQ(piece.data.data(), v.data());
  EXPECT_EQ(piece.data.extent(0), 12u);
  EXPECT_NE(test::error_of([&] {
              local_piece(Box{{2, 0}, {5, 5}}, v);
            }).find("has extent 4 along dimension 1"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              local_piece(Box{{0}, {12}}, v);
            }).find("a rank-2 view cannot hold box"),
            std::string::npos);
}

}  // namespace
