// Foreign-launcher detection against a faked launcher environment.
#include <einrel_Config.hpp>
#include <einrel_Launcher.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace {

using einrel::cli::detect_foreign_launcher;

// Clears every launcher variable for the test and puts the real environment back afterwards (the
// program itself may run under a launcher).
class Launcher : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : variables) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : variables) unsetenv(name);
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }
  // With `world_size` ranks in MPI_COMM_WORLD the launcher is foreign, the message shows `evidence`, and
  // `reports` says whether this process prints it.
  static void expect_refused(int world_size, const std::string& evidence, bool reports) {
    const auto foreign = detect_foreign_launcher(world_size);
    ASSERT_TRUE(foreign.has_value()) << evidence;
    EXPECT_NE(foreign->message.find(evidence), std::string::npos) << foreign->message;
    EXPECT_EQ(foreign->report, reports) << foreign->message;
  }

 private:
  static constexpr const char* variables[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK",
                                              "PMIX_RANK"};
  std::map<std::string, std::string> saved_;
};

#if defined(MPICH_VERSION) && !defined(OPEN_MPI)
TEST_F(Launcher, OpenMpiMpiexecStartingMpichSingletonsIsRefusedFromLauncherRankZero) {
  set("OMPI_COMM_WORLD_SIZE", "2");
  set("OMPI_COMM_WORLD_RANK", "0");
  set("PMIX_RANK", "0");
  const auto foreign = detect_foreign_launcher(1);
  ASSERT_TRUE(foreign.has_value());
  EXPECT_EQ(foreign->message, std::string("einrel was built with MPICH but started by Open MPI's mpiexec "
                                          "(OMPI_COMM_WORLD_SIZE=2, MPI sees 1 rank); start it with ") +
                                  EINREL_MPI_LAUNCHER);
  EXPECT_TRUE(foreign->report);

  // The other singletons refuse too, silently.
  set("OMPI_COMM_WORLD_RANK", "1");
  set("PMIX_RANK", "1");
  const auto other = detect_foreign_launcher(1);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->message, foreign->message);
  EXPECT_FALSE(other->report);
}
#endif

TEST_F(Launcher, TheMessageNamesTheLauncherEinrelWasConfiguredWith) {
  set("OMPI_COMM_WORLD_SIZE", "4");
  // No rank variable: this process is the only one that can tell.
  expect_refused(2, "(OMPI_COMM_WORLD_SIZE=4, MPI sees 2 ranks); start it with " + std::string(EINREL_MPI_LAUNCHER),
                 true);
}

TEST_F(Launcher, PmiSizeAboveTheMpiSizeIsRefusedFromPmiRankZero) {
  set("PMI_SIZE", "3");
  set("PMI_RANK", "0");
  expect_refused(1, "(PMI_SIZE=3, MPI sees 1 rank)", true);
  set("PMI_RANK", "2");
  expect_refused(1, "(PMI_SIZE=3, MPI sees 1 rank)", false);
}

TEST_F(Launcher, ARankBeyondTheMpiSizeIsRefusedAndReportedByTheLowestSuchRank) {
  set("PMIX_RANK", "1");
  expect_refused(1, "(PMIX_RANK=1, MPI sees 1 rank)", true);
  set("PMIX_RANK", "3");
  expect_refused(1, "(PMIX_RANK=3, MPI sees 1 rank)", false);
}

TEST_F(Launcher, NoLauncherVariablesIsAPlainSingleton) { EXPECT_FALSE(detect_foreign_launcher(1).has_value()); }

TEST_F(Launcher, TheRightLauncherAgreesWithMpi) {
  // MPICH's mpiexec (Hydra) with 4 ranks, seen from rank 3.
  set("PMI_SIZE", "4");
  set("PMI_RANK", "3");
  EXPECT_FALSE(detect_foreign_launcher(4).has_value());
  // Open MPI's mpiexec starting an Open MPI build.
  set("OMPI_COMM_WORLD_SIZE", "4");
  set("OMPI_COMM_WORLD_RANK", "3");
  set("PMIX_RANK", "3");
  EXPECT_FALSE(detect_foreign_launcher(4).has_value());
  // A launcher of one process: the singleton is the whole job.
  set("OMPI_COMM_WORLD_SIZE", "1");
  set("OMPI_COMM_WORLD_RANK", "0");
  set("PMI_SIZE", "1");
  set("PMI_RANK", "0");
  set("PMIX_RANK", "0");
  EXPECT_FALSE(detect_foreign_launcher(1).has_value());
}

TEST_F(Launcher, MalformedVariablesAreIgnored) {
  set("OMPI_COMM_WORLD_SIZE", "two");
  set("PMI_SIZE", "");
  set("PMIX_RANK", "-1");
  EXPECT_FALSE(detect_foreign_launcher(1).has_value());
}

TEST_F(Launcher, TheWorldOverloadComparesWithMpiCommWorld) {
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  set("PMI_SIZE", std::to_string(world_size).c_str());
  EXPECT_FALSE(detect_foreign_launcher().has_value());
  set("PMI_SIZE", std::to_string(world_size + 1).c_str());
  const auto foreign = detect_foreign_launcher();
  ASSERT_TRUE(foreign.has_value());
  EXPECT_NE(foreign->message.find("MPI sees " + std::to_string(world_size) + " rank"), std::string::npos)
      << foreign->message;
}

// The real environment of this program: run by CTest alone or under the configured launcher.
TEST(LauncherEnvironment, TheConfiguredLauncherIsNotForeign) { EXPECT_FALSE(detect_foreign_launcher().has_value()); }

}  // namespace
