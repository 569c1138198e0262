#ifndef EINREL_KOKKOSKERNELSCOMPAT_HPP
#define EINREL_KOKKOSKERNELSCOMPAT_HPP

// Kokkos Kernels 3.4 and 4.x differences (the Kokkos ones are in einrel_KokkosCompat.hpp).

#include <einrel_KokkosCompat.hpp>

#include <KokkosKernels_config.h>
#include <KokkosBlas3_gemm.hpp>

namespace einrel::compat {

// C = alpha op(A) op(B) + beta C on `exec`. Kokkos Kernels takes an execution space instance from 4.2 on;
// before, gemm runs on the space's default instance, so it is ordered after `exec` by fences.
template <class ExecutionSpace, class AView, class BView, class CView>
void gemm(const ExecutionSpace& exec, const char* trans_a, const char* trans_b, typename CView::const_value_type alpha,
          const AView& a, const BView& b, typename CView::const_value_type beta, const CView& c) {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40200
  KokkosBlas::gemm(exec, trans_a, trans_b, alpha, a, b, beta, c);
#else
  fence(exec, "einrel::compat::gemm: inputs");
  KokkosBlas::gemm(trans_a, trans_b, alpha, a, b, beta, c);
  ExecutionSpace().fence();
#endif
}

}  // namespace einrel::compat

#endif
