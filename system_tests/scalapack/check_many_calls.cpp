// Regression (issue 41, found by ScaLAPACK's tridiagonal reduction tester xdtrd with einrel preloaded): a
// factorization calls pdgemm_ on a new trailing submatrix at every step, and einrel kept a planned product, with
// its own communicator and copies of its operands, for every one of them until MPI_Finalize. After about 2,000
// MPICH had no communicator left: einrel handed every later call to ScaLAPACK and the application's own next
// communicator aborted the job. Now a grid keeps its most recently used products only (EINREL_SCALAPACK_CACHE).
//
// 2,100 pdgemm_ calls on distinct submatrices of a 96 x 96 matrix on a 1 x R grid, every 50th compared with the
// same call sent to ScaLAPACK (EINREL_SCALAPACK=off), then a new BLACS grid and an MPI_Comm_dup, as the
// application would make next. Prints "ok" when all hold.
//
//   mpiexec.mpich -n 2 build/system_tests/scalapack/check_many_calls
#include "einrel_TestPblas.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  setenv("EINREL_SCALAPACK", "on", 1);  // einrel takes every call it can (its model would leave these to ScaLAPACK)
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ctxt = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, size);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  const int n = 96, nb = 8, zero = 0, one = 1, calls = 2100;
  const int rows = numroc_(&n, &nb, &myrow, &zero, &nprow), cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
  const int lld = std::max(1, rows);
  const int desc[9] = {1, ctxt, n, n, nb, nb, 0, 0, lld};
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(static_cast<std::size_t>(lld) * cols), b(a.size()), c0(a.size()), c, reference;
  for (auto* v : {&a, &b, &c0})
    for (double& x : *v) x = u(gen);
  double worst = 0;
  const double alpha = -1, beta = 1;
  for (int t = 0; t < calls; ++t) {
    // A new trailing submatrix each call (offset, size and depth walk through distinct triples).
    const int off = 1 + t % (n / 2), m = n - off + 1 - (t / (n / 2)) % (n / 4), k = 1 + t % 7;
    c = c0;
    pdgemm_("N", "N", &m, &m, &k, &alpha, a.data(), &off, &one, desc, b.data(), &one, &off, desc, &beta, c.data(), &off,
            &off, desc);
    if (t % 50 != 0) continue;
    reference = c0;
    setenv("EINREL_SCALAPACK", "off", 1);
    pdgemm_("N", "N", &m, &m, &k, &alpha, a.data(), &off, &one, desc, b.data(), &one, &off, desc, &beta,
            reference.data(), &off, &off, desc);
    setenv("EINREL_SCALAPACK", "on", 1);
    for (std::size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::abs(c[i] - reference[i]));
  }
  int ctxt2 = 0;
  Cblacs_get(0, 0, &ctxt2);
  Cblacs_gridinit(&ctxt2, "Col", size, 1);
  MPI_Comm mine;
  const int dup = MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  if (dup == MPI_SUCCESS) MPI_Comm_free(&mine);
  double most = 0;
  MPI_Reduce(&worst, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  const bool ok = dup == MPI_SUCCESS && most <= 1e-12;
  if (rank == 0)
    std::printf(
        "%d distinct pdgemm_ calls on a 1 x %d grid, max |C - ScaLAPACK's C| %.2e, then a new grid and "
        "communicator: %s\n",
        calls, size, most, ok ? "ok" : "FAILED");
  Cblacs_gridexit(ctxt2);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return ok ? 0 : 1;
}
