// The cost model and viable partitionings against the worked numbers of eindecomp.txt §6–8.1 (with
// the corrections of eindecomp.txt listed in docs/planner.md).
#include <einrel_CostModel.hpp>
#include <einrel_Error.hpp>
#include <einrel_Viable.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace einrel;
using partition::PartitionVector;

const EinSum matmul = EinSum::parse("ij,jk->ik", 2);
const std::vector<Bound> square8 = {{8, 8}, {8, 8}};

TEST(PlannerCostModel, JoinCostFollowsTheFormula) {
  // §7, top-left case of Figure 2: d = [4,1,1,4] gives n_X = n_Y = 16 and J = 16 join results; the paper
  // prints "8 × (16 + 16)" but its formula J · (n_X + n_Y) gives 16 × 32.
  EXPECT_DOUBLE_EQ(partition::join_cost(resolve(matmul, square8), PartitionVector("ijk", {4, 1, 4})), 512);
  // §6: d = [16,2,2,4] has 16 × 2 × 4 = 128 join results.
  EXPECT_EQ(PartitionVector("ijk", {16, 2, 4}).num_join_results(), 128);
  // Unary: J · n_X.
  EXPECT_DOUBLE_EQ(partition::join_cost(resolve(EinSum::parse("ij->i", 1), {{8, 8}}), PartitionVector("ij", {2, 4})),
                   64);
}

TEST(PlannerCostModel, AggregationCostIsSixtyFourForTheWorkedExample) {
  // §7, bottom-right case: d = [2,2,2,4], n_agg = 2, n_Z = 8: 16/2 · (2 − 1) · 8.
  EXPECT_DOUBLE_EQ(partition::aggregation_cost(resolve(matmul, square8), PartitionVector("ijk", {2, 2, 4})), 64);
  EXPECT_DOUBLE_EQ(partition::aggregation_cost(resolve(matmul, square8), PartitionVector("ijk", {4, 1, 4})), 0);
  // A full reduction of an 8×8 matrix into one scalar from 8 blocks: 7 partial scalars move.
  EXPECT_DOUBLE_EQ(
      partition::aggregation_cost(resolve(EinSum::parse("ij->", 1), {{8, 8}}), PartitionVector("ij", {4, 2})), 7);
}

TEST(PlannerCostModel, RepartitionCostIsThreeHundredTwentyForTheWorkedExample) {
  // §7: the producer [2,2,2,4] leaves Z in [2,4] blocks, the consumer [4,1,1,4] wants X in [4,1] blocks:
  // 128 to extract the producer blocks' halves + 192 to assemble the consumer blocks.
  EXPECT_DOUBLE_EQ(partition::repartition_cost({8, 8}, {2, 4}, {4, 1}), 320);
  EXPECT_DOUBLE_EQ(partition::repartition_cost({8, 8}, {2, 4}, {2, 4}), 0);
  // Producer blocks inside consumer blocks (n_p = n_int): no extraction term, (4 − 1) · 4 · (16 + 4).
  EXPECT_DOUBLE_EQ(partition::repartition_cost({8, 8}, {4, 4}, {2, 2}), 240);
}

TEST(PlannerCostModel, UnevenBlocksUseRealDivision) {
  // n_X = 5/2 · 3 = 7.5 (blocks of 3 and 2 rows): J · n_X is exactly the floats of X times its replication,
  // 2 · 7.5 + 2 · 12 (Y is whole and read by both join results).
  EXPECT_DOUBLE_EQ(partition::join_cost(resolve(matmul, {{5, 3}, {3, 4}}), PartitionVector("ijk", {2, 1, 1})),
                   2 * 7.5 + 2 * 12);
  // n_p = 1.5, n_c = 3, n_int = 1.5: (3/1.5 − 1) · 1 · 4.5.
  EXPECT_DOUBLE_EQ(partition::repartition_cost({3}, {2}, {1}), 4.5);
  // The vector's label order does not matter.
  EXPECT_DOUBLE_EQ(partition::join_cost(resolve(matmul, square8), PartitionVector("kji", {4, 1, 4})), 512);
}

// The engine model (docs/planner.md "Cost models"): copies beyond one, and the parts of a producer block
// outside the consumer block read at its site.
TEST(PlannerCostModel, EngineModelChargesCopiesBeyondOne) {
  using partition::CostModel;
  const partition::EinSumCost engine(resolve(matmul, square8), CostModel::engine);
  // d = [4,1,4]: J = 16 tuples each read a 16-float block of X and of Y; each operand has 64 floats, so
  // 16 · 16 − 64 = 192 floats of each are copies beyond the first.
  EXPECT_DOUBLE_EQ(engine.join({4, 1, 4}), 2 * 192);
  // d = [1,8,1]: every block is read once, nothing is copied; the 8 partials of the one output block
  // still meet at its owner (aggregation as in the paper model).
  EXPECT_DOUBLE_EQ(engine.join({1, 8, 1}), 0);
  EXPECT_DOUBLE_EQ(engine.aggregation({1, 8, 1}), 7 * 64);
  // The default model of a lone EinSum is the paper's.
  EXPECT_DOUBLE_EQ(partition::EinSumCost(resolve(matmul, square8)).join({4, 1, 4}), 512);
  // [2,4] -> [4,1]: a producer block of 8 floats overlaps its site's consumer block in 4, so 64 · 1/2 moves.
  EXPECT_DOUBLE_EQ(partition::repartition_cost({8, 8}, {2, 4}, {4, 1}, CostModel::engine), 32);
  EXPECT_DOUBLE_EQ(partition::repartition_cost({8, 8}, {2, 4}, {2, 4}, CostModel::engine), 0);
  // Producer blocks inside consumer blocks stay (the other pieces are the consumer's copies beyond one).
  EXPECT_DOUBLE_EQ(partition::repartition_cost({8, 8}, {4, 4}, {2, 2}, CostModel::engine), 0);
  // Uneven: the producer holds the whole 3-vector, its site reads a consumer block of 1.5: 1.5 moves.
  EXPECT_DOUBLE_EQ(partition::repartition_cost({3}, {1}, {2}, CostModel::engine), 1.5);
}

TEST(PlannerCostModel, ModelsAreNamed) {
  EXPECT_EQ(partition::parse_cost_model("engine"), partition::CostModel::engine);
  EXPECT_EQ(partition::parse_cost_model("paper"), partition::CostModel::paper);
  EXPECT_EQ(partition::cost_model_name(partition::CostModel::paper), "paper");
  try {
    partition::parse_cost_model("exact");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("available: engine, paper"), std::string::npos) << e.what();
  }
}

TEST(PlannerViable, TenPartitioningsOfAnEightByEightMatmulAtEightProcessors) {
  const auto viable = partition::viable(resolve(matmul, square8), 8);
  EXPECT_EQ(viable.size(), 10u);
  // The eight that §8.2 lists, [i, j, j, k] written over the unique labels i, j, k.
  for (const auto& listed : std::vector<std::vector<Extent>>{
           {2, 1, 4}, {4, 1, 2}, {8, 1, 1}, {1, 1, 8}, {2, 2, 2}, {4, 2, 1}, {1, 2, 4}, {1, 8, 1}})
    EXPECT_NE(std::find(viable.begin(), viable.end(), PartitionVector("ijk", listed)), viable.end())
        << PartitionVector("ijk", listed).str();
  for (const auto& d : viable) EXPECT_EQ(d.num_join_results(), 8) << d.str();
}

TEST(PlannerViable, ThreeThousandThreePartitioningsForTenDoublingsOverSixLabels) {
  // N = 10, D = 6 free labels: (N + D − 1)! / (N! (D − 1)!) = 3003 (§8.1).
  const EinSum e = EinSum::parse("abcd,cdef->abef", 2);
  EXPECT_EQ(partition::viable(resolve(e, {{1024, 1024, 1024, 1024}, {1024, 1024, 1024, 1024}}), 1024).size(), 3003u);
  // Co-partitioned labels count once: a 4-label matmul-like product at N = 3 has C(6, 3) = 20.
  EXPECT_EQ(partition::viable(resolve(EinSum::parse("bij,bjk->bik", 2), {{8, 8, 8}, {8, 8, 8}}), 8).size(), 20u);
}

TEST(PlannerViable, ExtentsCapThePartsAndFallBackBelowP) {
  // i has extent 3: at most 2 parts.
  for (const auto& d : partition::viable(resolve(matmul, {{3, 8}, {8, 8}}), 16))
    EXPECT_LE(d.parts_of('i'), 2) << d.str();
  // 2×1 times 1×1 cannot reach 16: the one vector with the largest product, every label at its maximum.
  const auto fallback = partition::viable(resolve(matmul, {{2, 1}, {1, 1}}), 16);
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0], PartitionVector("ijk", {2, 1, 1}));
  // A scalar has one (empty) vector; p = 1 leaves everything whole.
  EXPECT_EQ(partition::viable(resolve(EinSum::parse("->", 1), {{}}), 4).size(), 1u);
  const auto whole = partition::viable(resolve(matmul, square8), 1);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0], PartitionVector("ijk", {1, 1, 1}));
}

TEST(PlannerViable, AnyPIsFactorizedOverTheLabels) {
  // p = 6 = 2 · 3 over three labels of extent 8: the 2 and the 3 each go to one of three labels, 9 vectors.
  const auto six = partition::viable(resolve(matmul, square8), 6);
  EXPECT_EQ(six.size(), 9u);
  for (const auto& d : six) EXPECT_EQ(d.num_join_results(), 6) << d.str();
  EXPECT_EQ(six.front(), PartitionVector("ijk", {6, 1, 1}));  // first label's parts largest first
  EXPECT_EQ(six.back(), PartitionVector("ijk", {1, 1, 6}));
  // A prime p larger than every extent cannot be reached: the largest divisor that can is 1.
  const auto prime = partition::viable(resolve(matmul, square8), 11);
  ASSERT_EQ(prime.size(), 1u);
  EXPECT_EQ(prime[0], PartitionVector("ijk", {1, 1, 1}));
  // Extents 3, 2, 1 at p = 12: 12 is out of reach, 6 = 3 · 2 is the largest divisor within it.
  const auto capped = partition::viable(resolve(matmul, {{3, 2}, {2, 1}}), 12);
  ASSERT_EQ(capped.size(), 1u);
  EXPECT_EQ(capped[0], PartitionVector("ijk", {3, 2, 1}));
  // At p = 4 the same extents give {2,2,1} only (i cannot take 4).
  const auto four = partition::viable(resolve(matmul, {{3, 2}, {2, 1}}), 4);
  ASSERT_EQ(four.size(), 1u);
  EXPECT_EQ(four[0], PartitionVector("ijk", {2, 2, 1}));
  EXPECT_EQ(partition::divisors(12), (std::vector<Extent>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(partition::divisors(1), std::vector<Extent>{1});
  EXPECT_EQ(partition::divisors(Extent{1} << 40).size(), 41u);
  EXPECT_EQ(prime_factors(12), (std::vector<Extent>{2, 2, 3}));
  EXPECT_EQ(prime_factors(1), std::vector<Extent>{});
  EXPECT_EQ(prime_factors(1099511627689), std::vector<Extent>{1099511627689});  // the largest prime below 2^40
}

TEST(PlannerViable, RejectsPOutOfRange) {
  EXPECT_THROW(partition::viable(resolve(matmul, square8), 0), Error);
  try {
    partition::check_procs(-6);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("from 1 to 2^40, got -6"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(partition::check_procs(6));
}

}  // namespace
