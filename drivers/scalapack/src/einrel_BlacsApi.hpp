#ifndef EINREL_BLACSAPI_HPP
#define EINREL_BLACSAPI_HPP

// The C interface of the BLACS and ScaLAPACK's descriptor tools, as Debian's ScaLAPACK exports them (it has
// no C header): one list for libeinrel_scalapack, its tests and the ScaLAPACK peer programs of perf_tests/.

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cigsum2d(int context, const char* scope, const char* top, int m, int n, int* a, int lda, int rdest, int cdest);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);
}

#endif
