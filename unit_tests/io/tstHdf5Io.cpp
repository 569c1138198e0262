#include <einrel_Error.hpp>
#include <einrel_TestHdf5.hpp>

#include <einrel_TestHelpers.hpp>
#include <einrel_TestTempDir.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using namespace einrel;

TEST(Hdf5Io, RoundTripF64F32AndScalars) {
  test::TempDir dir(MPI_COMM_SELF);
  const auto a = test::random_values<double>({3, 4}, 1);
  const auto b = test::random_values<float>({5}, 2);
  const std::vector<double> s = {42.5};
  io::write_datasets(dir.file("t.h5"), {{"A", {3, 4}, a}, {"b", {5}, b}, {"s", {}, s}});
  EXPECT_EQ(std::get<std::vector<double>>(io::read_dataset(dir.file("t.h5"), "A", Dtype::f64, {3, 4})), a);
  EXPECT_EQ(std::get<std::vector<float>>(io::read_dataset(dir.file("t.h5"), "b", Dtype::f32, {5})), b);
  EXPECT_EQ(std::get<std::vector<double>>(io::read_dataset(dir.file("t.h5"), "s", Dtype::f64, {})), s);
  EXPECT_EQ(dir.count(), 1u);  // no temporary left behind
}

TEST(Hdf5Io, ReadErrorsNameFileDatasetAndProblem) {
  test::TempDir dir(MPI_COMM_SELF);
  const std::string f = dir.file("in.h5");
  io::write_datasets(f, {{"A", {2, 3}, std::vector<double>(6, 1.0)}, {"F", {2}, std::vector<float>(2, 1.0f)}});
  std::ofstream(dir.file("text.h5")) << "not hdf5";

  EXPECT_NE(test::error_of([&] {
              io::read_dataset(dir.file("missing.h5"), "A", Dtype::f64, {2, 3});
            }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              io::read_dataset(dir.file("text.h5"), "A", Dtype::f64, {2, 3});
            }).find("is not a readable HDF5 file"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              io::read_dataset(f, "B", Dtype::f64, {2, 3});
            }).find("has no dataset 'B'"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              io::read_dataset(f, "A", Dtype::f32, {2, 3});
            }).find("dataset 'A' is float64 but the graph declares f32"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { io::read_dataset(f, "F", Dtype::f64, {2}); }).find("is float32"), std::string::npos);
  EXPECT_NE(test::error_of([&] {
              io::read_dataset(f, "A", Dtype::f64, {3, 2});
            }).find("has shape [2,3] but the graph declares [3,2]"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { io::read_dataset(f, "A", Dtype::f64, {}); }).find("has shape [2,3]"),
            std::string::npos);
}

TEST(Hdf5Io, FailedWriteLeavesNothing) {
  test::TempDir dir(MPI_COMM_SELF);
  // A dataset name HDF5 cannot create ('/' makes it a path into a missing group) fails mid-file.
  const std::string out = dir.file("out.h5");
  EXPECT_THROW(io::write_datasets(out, {{"ok", {1}, std::vector<double>{1}}, {"no/such", {1}, std::vector<double>{1}}}),
               Error);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(dir.count(), 0u);
  EXPECT_THROW(io::write_datasets(dir.file("missing-dir/out.h5"), {}), Error);
}

}  // namespace
