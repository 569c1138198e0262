// PBLAS as the ScaLAPACK test programs call them (Fortran symbols of Debian's ScaLAPACK), beside the BLACS
// (einrel_BlacsApi.hpp): one list of declarations for check_pblas, check_many_calls and check_illegal_descriptors.
#ifndef EINREL_TESTPBLAS_HPP
#define EINREL_TESTPBLAS_HPP

#include <einrel_BlacsApi.hpp>

extern "C" {
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
