#include <einrel_Error.hpp>
#include <einrel_PartitionVector.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;
using partition::PartitionVector;

TEST(PartitionVector, ProjectsOntoTensorsAndCountsJoinResults) {
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  const PartitionVector d("ijk", {2, 4, 1});
  EXPECT_EQ(d.project(e.inputs[0]), (std::vector<Extent>{2, 4}));
  EXPECT_EQ(d.project(e.inputs[1]), (std::vector<Extent>{4, 1}));
  EXPECT_EQ(d.project(e.output), (std::vector<Extent>{2, 1}));
  EXPECT_EQ(d.num_join_results(), 8);
  EXPECT_EQ(d.str(), "{i:2,j:4,k:1}");
  EXPECT_NO_THROW(d.check_fits(resolve(e, {{8, 8}, {8, 8}})));
}

TEST(PartitionVector, UnpartitionedCoversEveryLabelOnce) {
  const PartitionVector d = PartitionVector::unpartitioned(EinSum::parse("bij,bjk->bik", 2));
  EXPECT_EQ(d.labels(), "bijk");
  EXPECT_EQ(d.num_join_results(), 1);
}

TEST(PartitionVector, RejectsInvalidVectors) {
  EXPECT_NO_THROW(PartitionVector("ij", {3, 1}));  // any whole number of parts, e.g. at p = 3
  EXPECT_THROW(PartitionVector("ij", {0, 1}), Error);
  EXPECT_THROW(PartitionVector("ij", {-2, 1}), Error);
  EXPECT_THROW(PartitionVector("ii", {2, 2}), Error);
  EXPECT_THROW(PartitionVector("ij", {2}), Error);
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  const ResolvedEinSum square4 = resolve(e, {{4, 4}, {4, 4}});
  EXPECT_THROW(PartitionVector("ij", {1, 1}).check_fits(square4), Error);  // k missing
  EXPECT_THROW(PartitionVector("ijk", {8, 1, 1}).check_fits(square4), Error);
  EXPECT_THROW(PartitionVector("ij", {1, 1}).parts_of('k'), Error);
}

}  // namespace
