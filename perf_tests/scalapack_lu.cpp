// A ScaLAPACK LU factorization (pdgetrf_) of a random N×N matrix on a P×Q grid, 2-D block-cyclic with block
// size NB: the peer program of perf_tests/scalapack_drivers_bench.py, which runs it with and without
// libeinrel_scalapack.so preloaded (its trailing updates call pdgemm_). Unlike Debian's xdlu, whose work space
// is fixed at build time (N ≤ ~660 on 2 ranks), it allocates what N needs. Prints one line: the factorization's
// seconds between barriers, GFLOP/s (2/3 N³), and the sum of |LU| over the factored matrix (to compare runs).
//
//   mpiexec.mpich -n 2 build/perf_tests/einrel_scalapack_lu --n 3000 --nb 128 --grid 1x2
#include "einrel_BenchScalapack.hpp"

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = 3000, nb = 128, nprow = 1, npcol = size;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) {
      n = std::atoi(argv[++i]);
    } else if (a == "--nb" && i + 1 < argc) {
      nb = std::atoi(argv[++i]);
    } else if (a == "--grid" && i + 1 < argc && std::sscanf(argv[i + 1], "%dx%d", &nprow, &npcol) == 2) {
      ++i;
    } else {
      if (rank == 0) std::fprintf(stderr, "usage: %s [--n N] [--nb NB] [--grid PxQ]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  if (nprow * npcol != size || n < 1 || nb < 1) {
    if (rank == 0) std::fprintf(stderr, "einrel_scalapack_lu: a %dx%d grid on %d ranks\n", nprow, npcol, size);
    MPI_Finalize();
    return 2;
  }
  int context = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &context);
  Cblacs_gridinit(&context, "Row", nprow, npcol);
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);
  const int zero = 0, one = 1;
  const int rows = numroc_(&n, &nb, &myrow, &zero, &nprow), cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
  const int lld = rows > 1 ? rows : 1;
  int desc[9], info = 0;
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &context, &lld, &info);
  if (info != 0) {
    std::fprintf(stderr, "descinit failed: %d\n", info);
    MPI_Abort(MPI_COMM_WORLD, 1);  // a benchmark program, not the library
  }
  // Random entries in [-1, 1), the same on any grid: each a hash (splitmix64) of its global position.
  auto entry = [](unsigned long long x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
  };
  std::vector<double> a(static_cast<std::size_t>(lld) * (cols > 0 ? cols : 1));
  for (int lc = 0; lc < cols; ++lc)
    for (int lr = 0; lr < rows; ++lr) {
      const long long gr = (static_cast<long long>(lr / nb) * nprow + myrow) * nb + lr % nb;
      const long long gc = (static_cast<long long>(lc / nb) * npcol + mycol) * nb + lc % nb;
      a[static_cast<std::size_t>(lc) * lld + lr] = entry(static_cast<unsigned long long>(gr * n + gc));
    }
  std::vector<int> ipiv(static_cast<std::size_t>(rows + nb));

  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  pdgetrf_(&n, &n, a.data(), &one, &one, desc, ipiv.data(), &info);
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - start;

  double mine = 0, all = 0;
  for (int lc = 0; lc < cols; ++lc)
    for (int lr = 0; lr < rows; ++lr) mine += std::fabs(a[static_cast<std::size_t>(lc) * lld + lr]);
  MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("scalapack-lu: N = %d, NB = %d, grid %dx%d: %.4f s, %.1f GFLOP/s, info %d, sum |LU| %.12e\n", n, nb,
                nprow, npcol, seconds, 2.0 / 3.0 * n * static_cast<double>(n) * n / seconds * 1e-9, info, all);
  Cblacs_gridexit(context);
  MPI_Finalize();
  return info == 0 ? 0 : 1;
}
