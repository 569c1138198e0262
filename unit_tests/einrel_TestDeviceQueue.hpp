#ifndef EINREL_TESTDEVICEQUEUE_HPP
#define EINREL_TESTDEVICEQUEUE_HPP

// For tests that issued work does not wait on the host for the device: keep_busy queues a long kernel,
// the test issues its calls, and still_busy says whether that kernel is still queued when they return.

#include <einrel_KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <optional>
#include <type_traits>

namespace einrel::test {

// One device thread spinning for `cycles` clock cycles; nothing on a host backend.
struct SpinFunctor {
  long long cycles;
  KOKKOS_INLINE_FUNCTION void operator()(int) const {
#if defined(__CUDA_ARCH__)
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
#endif
  }
};

// Queues a kernel on `exec` that keeps the device busy for 4·10^8 cycles (0.2 s at 2 GHz).
template <class ExecutionSpace>
void keep_busy(const ExecutionSpace& exec) {
  Kokkos::parallel_for("einrel::test::keep_busy", compat::index_range(exec, 0, 1), SpinFunctor{400'000'000});
}

// Whether `exec` still has work queued; nothing where its kernels run before their launch returns.
template <class ExecutionSpace>
std::optional<bool> still_busy([[maybe_unused]] const ExecutionSpace& exec) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>)
    return cudaStreamQuery(exec.cuda_stream()) == cudaErrorNotReady;
#endif
  return std::nullopt;
}

}  // namespace einrel::test

#endif
