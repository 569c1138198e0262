#ifndef EINREL_SIMDISA_HPP
#define EINREL_SIMDISA_HPP

// The x86-64 vector ISAs einrel has hand-written kernels for (the generic ⊗/⊕ micro-kernels, the
// transposing permutation), and which of them the running CPU supports. Free of Kokkos: the kernels live
// in translation units of their own, compiled for their ISA whatever the build's -march, and are called
// only where the CPU has it.

#include <optional>
#include <vector>

// The kernels need x86-64 intrinsics and GCC/Clang target attributes; nvcc's front end does not parse
// every x86 intrinsic header, so CUDA builds leave them out (host spaces there use the portable code).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#define EINREL_SIMD_X86 1
#else
#define EINREL_SIMD_X86 0
#endif

namespace einrel::kernels::simd {

enum class Isa { avx2, avx512 };  // AVX2 with FMA; that and AVX-512F

// The ISAs this build has kernels for and the running CPU supports, best last (empty off x86-64).
const std::vector<Isa>& supported_isas();
// The last of them, if any.
std::optional<Isa> best_isa();
const char* isa_name(Isa isa);

}  // namespace einrel::kernels::simd

#endif
