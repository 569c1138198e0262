#include <einrel_TensorRelation.hpp>
#include <einrel_TraOps.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;
using T64 = Tensor<double, TEST_MEMSPACE>;
using R64 = Relation<double, TEST_MEMSPACE>;
using TR64 = TensorRelation<double, TEST_MEMSPACE>;

// Element i of the tensor is i: every block's contents tell where it came from.
T64 iota(const Bound& b) {
  std::vector<double> v(num_elements(b));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return tensor_from_host<TEST_MEMSPACE>("iota", b, v);
}

std::vector<double> host(const T64& t) { return tensor_to_host(t); }

// acc += x elementwise on the device (outside the test bodies: NVCC rejects lambdas there).
void add_into(const TEST_EXECSPACE& exec, const T64& acc, const T64& x) {
  const auto a = acc.view();
  const auto b = x.view();
  Kokkos::parallel_for(
      "add_into", Kokkos::RangePolicy<TEST_EXECSPACE>(exec, 0, acc.size()),
      KOKKOS_LAMBDA(const int i) { a(i) += b(i); });
}

TEST(TEST_CATEGORY, TensorRelationBlocksFollowTheGrid) {
  TEST_EXECSPACE exec;
  const T64 t = iota({4, 4});
  // The paper's 4x4 example cut [4, 2] (eindecomp.txt §4.1): 8 blocks of [1, 2].
  const TR64 r = to_relation(exec, t, {4, 2});
  EXPECT_EQ(r.relation().size(), 8u);
  EXPECT_EQ(host(r.block({1, 1})), (std::vector<double>{6, 7}));
  EXPECT_EQ(host(r.block({3, 0})), (std::vector<double>{12, 13}));
  // Uneven: 7 = 3 + 2 + 2 along the rows, 5 = 3 + 2 along the columns.
  const T64 u = iota({7, 5});
  const TR64 ru = to_relation(exec, u, {3, 2});
  EXPECT_EQ(ru.block({0, 0}).bound(), (Bound{3, 3}));
  EXPECT_EQ(ru.block({2, 1}).bound(), (Bound{2, 2}));
  EXPECT_EQ(host(ru.block({2, 1})), (std::vector<double>{28, 29, 33, 34}));
  EXPECT_EQ(host(to_tensor(exec, ru, "back")), host(u));
  // Rank 0: one block, key [].
  const T64 s = iota({});
  const TR64 rs = to_relation(exec, s, {});
  EXPECT_EQ(rs.relation().size(), 1u);
  EXPECT_EQ(host(to_tensor(exec, rs, "s")), host(s));
}

TEST(TEST_CATEGORY, TensorRelationChecksItsInvariants) {
  TEST_EXECSPACE exec;
  const TR64 r = to_relation(exec, iota({5, 4}), {2, 2});
  auto without = [&](const Key& k) { return tra::filter(r.relation(), [&](const Key& key) { return key != k; }); };
  EXPECT_THROW(TR64({5, 4}, {2, 2}, without({1, 1})), Error);     // a hole
  EXPECT_THROW(TR64({5, 4}, {2, 2}, without({0, 0})), Error);     // a hole at the start
  EXPECT_THROW(TR64({5, 4}, {2, 4}, r.relation()), Error);        // blocks of the wrong shape
  EXPECT_THROW(TR64({5, 4}, {2, 1}, r.relation()), Error);        // keys outside the partition
  EXPECT_THROW(TR64({5, 4}, {8, 1}, r.relation()), Error);        // more parts than the extent
  EXPECT_THROW(TR64({5, 4, 1}, {2, 2, 1}, r.relation()), Error);  // key arity != rank
  R64 dup(2);
  dup.insert({0, 0}, r.block({0, 0}));
  EXPECT_THROW(dup.insert({0, 0}, r.block({0, 0})), Error);  // uniqueness
  EXPECT_THROW(dup.insert({0}, r.block({0, 0})), Error);     // arity
  EXPECT_THROW(dup.insert({0, -1}, r.block({0, 0})), Error);
  TR64 copy({5, 4}, {2, 2}, r.relation());
  EXPECT_EQ(copy.relation().size(), 4u);
}

TEST(TEST_CATEGORY, RepartitionMovesEveryElementToItsNewBlock) {
  TEST_EXECSPACE exec;
  const T64 t = iota({7, 6, 5});
  const std::vector<std::vector<Extent>> partitions = {{1, 1, 1}, {4, 2, 1}, {2, 4, 2},
                                                       {7, 1, 5}, {1, 6, 4}, {3, 5, 2}};
  for (const auto& from : partitions)
    for (const auto& to : partitions) {
      const TR64 moved = repartition(exec, to_relation(exec, t, from), to);
      EXPECT_EQ(moved.parts(), to);
      EXPECT_EQ(host(to_tensor(exec, moved, "t")), host(t)) << to_string(from) << " -> " << to_string(to);
    }
}

// The paper's matrix multiply in the TRA (tensor-relational-algebra.txt §3.1): join on the inner key,
// multiply blocks, aggregate over the inner key.
TEST(TEST_CATEGORY, JoinAndAggregateMultiplyMatrices) {
  TEST_EXECSPACE exec;
  const auto a = test::random_values<double>({6, 5}, 1), b = test::random_values<double>({5, 4}, 2);
  const TR64 ra = to_relation(exec, tensor_from_host<TEST_MEMSPACE>("A", {6, 5}, a), {2, 2});
  const TR64 rb = to_relation(exec, tensor_from_host<TEST_MEMSPACE>("B", {5, 4}, b), {2, 2});
  int kernel_calls = 0;
  auto matmul = [&](const T64& x, const T64& y) {  // a host loop nest as the block kernel
    ++kernel_calls;
    const auto hx = host(x), hy = host(y);
    const Extent m = x.bound()[0], k = x.bound()[1], n = y.bound()[1];
    std::vector<double> z(m * n, 0.0);
    for (Extent i = 0; i < m; ++i)
      for (Extent l = 0; l < k; ++l)
        for (Extent j = 0; j < n; ++j) z[i * n + j] += hx[i * k + l] * hy[l * n + j];
    return tensor_from_host<TEST_MEMSPACE>("z", {m, n}, z);
  };
  const R64 joined = tra::join(ra.relation(), rb.relation(), {1}, {0}, matmul);
  EXPECT_EQ(joined.key_arity(), 3);  // <i, j, k>
  EXPECT_EQ(kernel_calls, 8);
  const R64 summed =
      tra::aggregate(exec, joined, {0, 2}, [&](const T64& acc, const T64& x) { add_into(exec, acc, x); });
  const TR64 product({6, 4}, {2, 2}, summed);
  test::expect_all_close(host(to_tensor(exec, product, "AB")),
                         test::reference_einsum(EinSum::parse("ij,jk->ik", 2), {{6, 5}, {5, 4}}, std::vector{a, b}),
                         test::sum_tolerance<double>(5));
  EXPECT_THROW(tra::join(ra.relation(), rb.relation(), {1}, {}, matmul), Error);
  EXPECT_THROW(tra::join(ra.relation(), rb.relation(), {2}, {0}, matmul), Error);
}

// Filter, rekey and transform select the diagonal blocks, as in the paper's diag example.
TEST(TEST_CATEGORY, FilterRekeyTransform) {
  TEST_EXECSPACE exec;
  const TR64 r = to_relation(exec, iota({4, 4}), {2, 2});
  const R64 diagonal = tra::filter(r.relation(), [](const Key& k) { return k[0] == k[1]; });
  EXPECT_EQ(diagonal.size(), 2u);
  const R64 rekeyed = tra::rekey(diagonal, 1, [](const Key& k) { return Key{k[0]}; });
  EXPECT_EQ(rekeyed.key_arity(), 1);
  rekeyed.check_continuity();
  const R64 traces = tra::transform(rekeyed, [](const T64& block) {
    const auto h = host(block);
    return tensor_from_host<TEST_MEMSPACE>("trace", {}, std::vector<double>{h[0] + h[3]});
  });
  EXPECT_EQ(host(traces.at({0})), std::vector<double>{0 + 5});
  EXPECT_EQ(host(traces.at({1})), std::vector<double>{10 + 15});
  // Collisions and holes.
  EXPECT_THROW(tra::rekey(r.relation(), 1, [](const Key& k) { return Key{k[0]}; }), Error);
  const R64 holey = tra::filter(r.relation(), [](const Key& k) { return k != Key{0, 1}; });
  EXPECT_THROW(holey.check_continuity(), Error);
}

TEST(TEST_CATEGORY, TileAndConcatAreInverses) {
  TEST_EXECSPACE exec;
  const T64 t = iota({5, 7});
  R64 whole(0);
  whole.insert({}, t);
  // Tiling along every dimension gives the TensorRelation's blocks.
  const R64 tiled = tra::tile(exec, tra::tile(exec, whole, 0, 2), 1, 3);
  const TR64 expected = to_relation(exec, t, {2, 3});
  ASSERT_EQ(tiled.size(), expected.relation().size());
  for (const auto& [key, block] : expected.relation()) EXPECT_EQ(host(tiled.at(key)), host(block));
  // Concat undoes it, one key dimension at a time (the last first, then the first).
  const R64 rows = tra::concat(exec, tiled, 1, 1);
  EXPECT_EQ(rows.key_arity(), 1);
  EXPECT_EQ(rows.at({1}).bound(), (Bound{2, 7}));
  const R64 back = tra::concat(exec, rows, 0, 0);
  EXPECT_EQ(host(back.at({})), host(t));
  EXPECT_THROW(tra::tile(exec, whole, 2, 2), Error);  // no such dimension
  EXPECT_THROW(tra::tile(exec, whole, 0, 6), Error);  // more pieces than rows
  const R64 gap = tra::filter(tiled, [](const Key& k) { return k[1] != 1; });
  EXPECT_THROW(tra::concat(exec, gap, 1, 1), Error);
}

}  // namespace
