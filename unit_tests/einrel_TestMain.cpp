// Shared main of every test program: MPI, then Kokkos, then GoogleTest; finalized in reverse.
// A failure on any rank fails the program on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>

namespace {

// On ranks other than 0: prints each failed assertion with its rank, nothing else.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char* argv[]) {
  int provided = 0;  // einrel calls MPI from this thread while Kokkos threads compute
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  Kokkos::initialize(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // Only rank 0 prints progress; other ranks still print their failures.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  Kokkos::finalize();
  MPI_Finalize();
  return failed;
}
