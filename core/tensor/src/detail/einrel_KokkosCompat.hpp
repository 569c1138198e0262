#ifndef EINREL_KOKKOSCOMPAT_HPP
#define EINREL_KOKKOSCOMPAT_HPP

// The only place where Kokkos 3.4 and Kokkos 4.x differences are handled (docs/dependencies.md), and the one
// place for what only nvcc needs.

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

// Put before a host-and-device template that calls a callable it is given (a dispatcher such as
// with_constant): nvcc checks the instantiation a host lambda makes as if it could run on the device and
// warns; the callable decides where the call runs, so the check is off for these templates only.
#if defined(__NVCC__)
#define EINREL_DISPATCH_ANY_SPACE _Pragma("nv_exec_check_disable")
#else
#define EINREL_DISPATCH_ANY_SPACE
#endif

namespace einrel::compat {

// Fences one execution space instance; labelled fences exist from Kokkos 3.6 on.
template <class ExecutionSpace>
void fence(const ExecutionSpace& exec, [[maybe_unused]] const std::string& label) {
#if KOKKOS_VERSION >= 30600
  exec.fence(label);
#else
  exec.fence();
#endif
}

// `policy` with its functor passed as a kernel argument (Kokkos' HintLightWeight, in 3.4 and 4.x alike).
// Otherwise Kokkos' Cuda backend copies a launch of 512 bytes or more (einrel's index geometries make
// theirs that large) into one shared constant-memory buffer and first waits, on the host, for the kernel
// that used the buffer before (cudaEventSynchronize): every such launch then waits for the last one, and
// the host's work between kernels no longer overlaps the device's.
template <class Policy>
auto light_weight(const Policy& policy) {
  return Kokkos::Experimental::require(policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

// A TeamPolicy of `league` teams of `team_size` threads on `exec`, as einrel launches its team kernels
// (light_weight). Kokkos 3.4's Cuda backend sizes an instance's level-1 team scratch at every team launch,
// and while that size is 0 each launch allocates it anew (CudaInternal::resize_team_scratch_space): a
// cudaMalloc and a blocking cudaMemcpy of the allocation's header, so a team kernel that asks for level-0
// scratch only waits on the host for every kernel before it, and the allocation leaks. One byte of
// level-1 scratch per instance, taken here once, ends both (test RepeatedPermutationsAllocateNothing).
// Kokkos 4.x keeps a pool of such buffers per instance behind another interface; not patched here.
template <class ExecutionSpace>
auto team_policy(const ExecutionSpace& exec, int league, int team_size) {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>)
    exec.impl_internal_space_instance()->resize_team_scratch_space(1);
#endif
  return light_weight(Kokkos::TeamPolicy<ExecutionSpace>(exec, league, team_size));
}

// [begin, end) on `exec` as einrel launches its kernels: light_weight, Index-typed.
template <class ExecutionSpace, class Index>
auto index_range(const ExecutionSpace& exec, Index begin, Index end) {
  return light_weight(Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Index>>(exec, begin, end));
}

// A host mirror of `view` whose contents are left uninitialized (3.4 takes the tag last, 4.x first).
template <class View>
auto create_host_mirror_uninitialized(const View& view) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::create_mirror_view(Kokkos::view_alloc(Kokkos::HostSpace{}, Kokkos::WithoutInitializing), view);
#else
  return Kokkos::create_mirror_view(Kokkos::HostSpace{}, view, Kokkos::WithoutInitializing);
#endif
}

// Device-callable math: Kokkos 3.4 keeps these in Kokkos::Experimental, 3.7 and later in Kokkos.
#if KOKKOS_VERSION >= 30700
using Kokkos::exp;
using Kokkos::log;
using Kokkos::pow;
using Kokkos::sqrt;
using Kokkos::tanh;
#else
using Kokkos::Experimental::exp;
using Kokkos::Experimental::log;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sqrt;
using Kokkos::Experimental::tanh;
#endif

}  // namespace einrel::compat

#endif
