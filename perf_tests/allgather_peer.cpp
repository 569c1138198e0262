// MPI's own allgather outside einrel, the check on the allgather+slice figures of einrel_reshard_bench and
// `einrel reshard --execute`: MPI_Allgather of N doubles per rank on MPI_COMM_WORLD into a touched buffer,
// median of 7 calls, the slowest rank's time.
//   mpiexec.mpich -n 2 build/perf_tests/einrel_allgather_peer 4194304
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const long n = argc > 1 ? std::atol(argv[1]) : 4194304;
  std::vector<double> mine(static_cast<std::size_t>(n), 1.0), all(static_cast<std::size_t>(n) * ranks, 0.0);
  std::vector<double> seconds;
  for (int k = 0; k < 7; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    MPI_Allgather(mine.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n), MPI_DOUBLE,
                  MPI_COMM_WORLD);
    double mine_s = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine_s, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    seconds.push_back(slowest);
  }
  std::sort(seconds.begin(), seconds.end());
  if (rank == 0) std::printf("MPI_Allgather of %ld doubles per rank on %d ranks: %.4f s\n", n, ranks, seconds[3]);
  MPI_Finalize();
  return 0;
}
