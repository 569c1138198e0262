// Regression (issue 41, found by ScaLAPACK's own PBLAS testers with einrel preloaded): PBLAS calls with an
// illegal descriptor entry (RSRC_ >= NPROW, CSRC_ >= NPCOL, LLD_ below the local rows) go to ScaLAPACK, which
// reports them, on every process of the grid. einrel used to compute them silently, and where the leading
// dimension was illegal on one process only (it is each process's own), to take the call on some processes and
// hand it to ScaLAPACK on others, which crashed the job. ScaLAPACK's error exit PB_Cabort is defined here, as
// ScaLAPACK's testers define it, to record the error instead of aborting (the program is linked -rdynamic).
//
//   mpiexec.mpich -n 1|2 build/system_tests/scalapack/check_illegal_descriptors
#include "einrel_TestPblas.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
int reported = 0;  // the info of the last error exit
}

extern "C" void PB_Cabort(int, const char*, int info) { reported = info; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  setenv("EINREL_SCALAPACK", "on", 1);  // einrel takes every call it can (its model would leave these to ScaLAPACK)
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ctxt = 0;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, size);  // 1 x R: every process holds all rows of its columns
  const int n = 4, one = 1, nb = 1;
  const double alpha = 1, beta = 0;
  // Which descriptor (0 = A, 2 = C), which entry, and its value on process 0 and on the others.
  struct Case {
    const char* what;
    int which, entry, on_first, on_others;
  };
  const Case cases[] = {{"DESCA(RSRC_) = 1 on a 1-row grid", 0, 6, 1, 1},
                        {"DESCA(CSRC_) = NPCOL", 0, 7, size, size},
                        {"DESCA(LLD_) = 2 < 4 local rows", 0, 8, 2, 2},
                        {"DESCC(LLD_) = 2 < 4 local rows", 2, 8, 2, 2},
                        {"DESCA(LLD_) = 1 on process 0, 0 on the others", 0, 8, 1, 0}};
  int failures = 0;
  for (const Case& k : cases)
    for (const char* routine : {"pdgemm_", "pdgeadd_"}) {
      int desc[3][9];
      for (auto& d : desc) {
        const int init[9] = {1, ctxt, n, n, nb, nb, 0, 0, n};
        std::memcpy(d, init, sizeof init);
      }
      desc[k.which][k.entry] = rank == 0 ? k.on_first : k.on_others;
      std::vector<double> a(16, 1.0), b(16, 2.0), c(16, -7.0);
      reported = 0;
      if (std::strcmp(routine, "pdgemm_") == 0)
        pdgemm_("N", "N", &n, &n, &n, &alpha, a.data(), &one, &one, desc[0], b.data(), &one, &one, desc[1], &beta,
                c.data(), &one, &one, desc[2]);
      else
        pdgeadd_("N", &n, &n, &alpha, a.data(), &one, &one, desc[0], &beta, c.data(), &one, &one, desc[2]);
      int mine = reported != 0, all = 0;
      MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
      if (!all) {
        ++failures;
        if (rank == 0) std::printf("FAILED: %s %s was not reported as illegal on every process\n", routine, k.what);
      }
    }
  if (rank == 0 && failures == 0)
    std::printf("illegal descriptors on %d ranks: every call reported by ScaLAPACK: ok\n", size);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return failures ? 1 : 0;
}
