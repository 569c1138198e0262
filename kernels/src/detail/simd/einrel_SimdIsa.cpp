// Which vector kernels the running CPU can take.
#include <einrel_SimdIsa.hpp>

namespace einrel::kernels::simd {

const std::vector<Isa>& supported_isas() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> found;
#if EINREL_SIMD_X86
    // __builtin_cpu_supports also checks that the OS saves the wider registers.
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      found.push_back(Isa::avx2);
      if (__builtin_cpu_supports("avx512f")) found.push_back(Isa::avx512);
    }
#endif
    return found;
  }();
  return isas;
}

std::optional<Isa> best_isa() {
  const std::vector<Isa>& isas = supported_isas();
  return isas.empty() ? std::nullopt : std::optional<Isa>(isas.back());
}

const char* isa_name(Isa isa) { return isa == Isa::avx512 ? "avx512" : "avx2"; }

}  // namespace einrel::kernels::simd
