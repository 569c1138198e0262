// Which library computes each pdgemm_ under EINREL_SCALAPACK=auto (the default), and plans reused at another
// offset: the calls below, each compared with the same call sent to ScaLAPACK (EINREL_SCALAPACK=off). With
// EINREL_SCALAPACK_VERBOSE=1, check_decisions.sh reads which way each call went from the library's lines.
//   1. a factorization's trailing update, k = the block size (2560 x 2560 x 64): ScaLAPACK;
//   2. a deep product (2560 x 2560 x 2048, blocks of 64): einrel, planned;
//   3. the same product into C a whole cycle of blocks further on (rows + 64, columns + 64 x npcol): einrel,
//      on the plan of call 2;
//   4. call 2 again with beta = 0 and alpha = 1 (C written in place).
// Prints "decisions: 4 calls agree with ScaLAPACK: ok" when every C agrees to rounding.
//
//   EINREL_SCALAPACK_VERBOSE=1 mpiexec.mpich -n 2 build/system_tests/scalapack/check_decisions
#include "einrel_TestPblas.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

struct Matrix {
  int desc[9];
  std::vector<double> local;
};

Matrix make(int m, int n, int nb, int ctxt, int myrow, int mycol, int nprow, int npcol, std::mt19937& gen) {
  const int zero = 0;
  const int rows = numroc_(&m, &nb, &myrow, &zero, &nprow), cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
  Matrix x{{1, ctxt, m, n, nb, nb, 0, 0, std::max(1, rows)}, {}};
  x.local.resize(static_cast<std::size_t>(std::max(1, rows)) * std::max(1, cols));
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : x.local) v = u(gen);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = std::getenv("EINREL_SCALAPACK");
  const std::string chosen = mode ? mode : "";
  int ctxt = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, size);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  const int nb = 64, n = 2560, k = 2048;
  std::mt19937 gen(5);
  Matrix a = make(n + nb, k, nb, ctxt, myrow, mycol, nprow, npcol, gen);
  Matrix b = make(k, n + nb * npcol, nb, ctxt, myrow, mycol, nprow, npcol, gen);
  const Matrix c0 = make(n + nb, n + nb * npcol, nb, ctxt, myrow, mycol, nprow, npcol, gen);
  struct Call {
    int m, n, k, ic, jc;
    double alpha, beta;
  };
  const Call calls[] = {{n, n, nb, nb + 1, nb + 1, -1, 1},
                        {n, n, k, 1, 1, 0.5, 2},
                        {n, n, k, nb + 1, nb * npcol + 1, 0.5, 2},
                        {n, n, k, 1, 1, 1, 0}};
  double worst = 0;
  const int one = 1;
  for (const Call& call : calls) {
    Matrix c = c0, reference = c0;
    pdgemm_("N", "N", &call.m, &call.n, &call.k, &call.alpha, a.local.data(), &one, &one, a.desc, b.local.data(), &one,
            &one, b.desc, &call.beta, c.local.data(), &call.ic, &call.jc, c.desc);
    setenv("EINREL_SCALAPACK", "off", 1);
    pdgemm_("N", "N", &call.m, &call.n, &call.k, &call.alpha, a.local.data(), &one, &one, a.desc, b.local.data(), &one,
            &one, b.desc, &call.beta, reference.local.data(), &call.ic, &call.jc, c.desc);
    if (mode)
      setenv("EINREL_SCALAPACK", chosen.c_str(), 1);
    else
      unsetenv("EINREL_SCALAPACK");
    double mine = 0;
    for (std::size_t i = 0; i < c.local.size(); ++i)
      mine = std::max(mine, std::abs(c.local[i] - reference.local[i]) / (1 + std::abs(reference.local[i])));
    worst = std::max(worst, mine);
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const bool ok = worst < 1e-12 * k;
  if (rank == 0)
    std::printf("decisions: 4 calls agree with ScaLAPACK: %s (largest difference %.3g)\n", ok ? "ok" : "FAILED", worst);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return ok ? 0 : 1;
}
