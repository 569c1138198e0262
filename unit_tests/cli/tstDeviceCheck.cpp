// Before Kokkos starts, the `einrel` program asks every rank whether it can start Kokkos' default
// execution space (a CUDA build on a node without a GPU cannot) and ends with one error line when one
// cannot. The agreement and the printing are checked here with a stand-in check; the CUDA build's
// Cli_no_visible_gpu runs the program itself with no GPU visible.
#include <einrel_DeviceCheck.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <sstream>
#include <type_traits>

namespace {

using namespace einrel;
using namespace einrel::cli;

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

TEST(DeviceCheck, HostBackendsCanAlwaysStart) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           Kokkos::DefaultExecutionSpace::memory_space>::accessible) {
    EXPECT_FALSE(device_unusable());
  }
  std::ostringstream err;
  EXPECT_TRUE(device_usable_on_every_rank(MPI_COMM_WORLD, err, [] { return std::nullopt; }));
  EXPECT_EQ(err.str(), "");
}

TEST(DeviceCheck, OneRankWithoutADeviceEndsEveryRankWithOneLine) {
  const int last = size_of(MPI_COMM_WORLD) - 1;
  std::ostringstream err;
  const bool usable = device_usable_on_every_rank(MPI_COMM_WORLD, err, [&]() -> std::optional<std::string> {
    if (rank_of(MPI_COMM_WORLD) != last) return std::nullopt;
    return "no CUDA device is visible to this process";
  });
  EXPECT_FALSE(usable);
  const std::string expected =
      rank_of(MPI_COMM_WORLD) == 0 ? "einrel: error: no CUDA device is visible to this process\n" : "";
  EXPECT_EQ(err.str(), expected);
}

TEST(DeviceCheck, TheLowestFailingRankSpeaks) {
  std::ostringstream err;
  const bool usable = device_usable_on_every_rank(MPI_COMM_WORLD, err, [&]() -> std::optional<std::string> {
    return "no usable CUDA device on rank " + std::to_string(rank_of(MPI_COMM_WORLD));
  });
  EXPECT_FALSE(usable);
  const std::string expected = rank_of(MPI_COMM_WORLD) == 0 ? "einrel: error: no usable CUDA device on rank 0\n" : "";
  EXPECT_EQ(err.str(), expected);
}

}  // namespace
