// BLACS and PBLAS as the ScaLAPACK test programs call them (Fortran symbols of Debian's ScaLAPACK, and the C
// BLACS interface): one list of declarations for check_pblas, check_many_calls and check_illegal_descriptors.
#ifndef EINREL_TESTPBLAS_HPP
#define EINREL_TESTPBLAS_HPP

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, const int*, const int*, const int*, const double*, double*,
             const int*, const int*, const int*);
void psgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
             const int*, const int*, const float*, const int*, const int*, const int*, const float*, float*, const int*,
             const int*, const int*);
void pdgeadd_(const char*, const int*, const int*, const double*, const double*, const int*, const int*, const int*,
              const double*, double*, const int*, const int*, const int*);
void psgeadd_(const char*, const int*, const int*, const float*, const float*, const int*, const int*, const int*,
              const float*, float*, const int*, const int*, const int*);
void pdtran_(const int*, const int*, const double*, const double*, const int*, const int*, const int*, const double*,
             double*, const int*, const int*, const int*);
void pstran_(const int*, const int*, const float*, const float*, const int*, const int*, const int*, const float*,
             float*, const int*, const int*, const int*);
}

#endif
