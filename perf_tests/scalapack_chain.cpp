// The ScaLAPACK peer of `einrel matrix-chain`: Z = (A×B) + (C×(D×E)) with pdgemm on a process grid as
// square as the rank count allows (nprow × npcol = R, nprow <= npcol), 2-D block-cyclic with block size NB.
// Square: all S×S; skewed: A S×S/10, B S/10×S, C S×S/10, D S/10×10S, E 10S×S (eindecomp.txt §9).
// Z is formed as pdgemm(C, DE) then pdgemm(A, B) accumulated into it (beta = 1): three pdgemm calls, the
// flops of einrel's chain. Prints one line: seconds and GFLOP/s of the three calls, timed between barriers.
//
//   mpiexec.mpich -n 2 build/perf_tests/einrel_scalapack_chain --scale 4096 [--skewed] [--nb 256]
#include "einrel_BenchScalapack.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

// One distributed matrix: its descriptor and this rank's local part (column-major), filled with values
// in [-1, 1) (the peer is timed, not checked: the same pdgemm calls on any values).
struct Matrix {
  int desc[9];
  std::vector<double> local;
  Matrix(int m, int n, int nb, int context, int myrow, int mycol, int nprow, int npcol, unsigned seed) {
    const int zero = 0;
    const int rows = std::max(1, numroc_(&m, &nb, &myrow, &zero, &nprow));
    const int cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
    int info = 0;
    descinit_(desc, &m, &n, &nb, &nb, &zero, &zero, &context, &rows, &info);
    if (info != 0) {
      std::fprintf(stderr, "descinit failed: %d\n", info);
      MPI_Abort(MPI_COMM_WORLD, 1);  // a benchmark program, not the library
    }
    local.resize(static_cast<std::size_t>(rows) * std::max(cols, 1));
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& x : local) x = u(gen);
  }
};

void gemm(const Matrix& a, const Matrix& b, Matrix& c, int m, int n, int k, double beta) {
  const int one = 1;
  const double alpha = 1;
  pdgemm_("N", "N", &m, &n, &k, &alpha, a.local.data(), &one, &one, a.desc, b.local.data(), &one, &one, b.desc, &beta,
          c.local.data(), &one, &one, c.desc);
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int s = 4096, nb = 256;
  bool skewed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--scale" && i + 1 < argc)
      s = std::atoi(argv[++i]);
    else if (a == "--nb" && i + 1 < argc)
      nb = std::atoi(argv[++i]);
    else if (a == "--skewed")
      skewed = true;
    else {
      if (rank == 0) std::fprintf(stderr, "usage: %s --scale S [--skewed] [--nb NB]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  int nprow = 1;
  for (int r = 1; r * r <= size; ++r)
    if (size % r == 0) nprow = r;
  int npcol = size / nprow;
  int context = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &context);
  Cblacs_gridinit(&context, "Row", nprow, npcol);
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);

  const int small = skewed ? s / 10 : s, large = skewed ? 10 * s : s;
  auto matrix = [&](int m, int n, unsigned seed) {
    return Matrix(m, n, nb, context, myrow, mycol, nprow, npcol, seed);
  };
  Matrix a = matrix(s, small, 1), b = matrix(small, s, 2), c = matrix(s, small, 3), d = matrix(small, large, 4),
         e = matrix(large, s, 5), de = matrix(small, s, 6), z = matrix(s, s, 7);

  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  gemm(d, e, de, small, s, large, 0.0);
  gemm(c, de, z, s, s, small, 0.0);
  gemm(a, b, z, s, s, small, 1.0);
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - start;
  // Flops as einrel counts them (graph_flops): 2mnk - mn per product, and the mn additions of Z.
  const double S = s, sm = small, lg = large;
  const double flops = (2 * sm * S * lg - sm * S) + (2 * S * S * sm - S * S) + (2 * S * S * sm - S * S) + S * S;
  if (rank == 0)
    std::printf("scalapack-chain: %s S = %d f64 on %d rank(s), grid %dx%d, nb %d: %.3f s, %.1f GFLOP/s\n",
                skewed ? "skewed" : "square", s, size, nprow, npcol, nb, seconds, flops / seconds * 1e-9);
  Cblacs_gridexit(context);
  MPI_Finalize();
  return 0;
}
