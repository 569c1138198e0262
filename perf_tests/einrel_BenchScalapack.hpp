#ifndef EINREL_BENCHSCALAPACK_HPP
#define EINREL_BENCHSCALAPACK_HPP

// The ScaLAPACK routines the ScaLAPACK peer programs of the benchmarks call (scalapack_chain.cpp,
// scalapack_lu.cpp), beside the BLACS (einrel_BlacsApi.hpp).

#include <einrel_BlacsApi.hpp>

extern "C" {
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);
void pdgetrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* ipiv,
              int* info);
}

#endif
