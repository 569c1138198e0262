#ifndef EINREL_COUNTERRANDOM_HPP
#define EINREL_COUNTERRANDOM_HPP

// Counter-based random tensors (`einrel run --random SEED`, docs/cli.md): element x of input number s
// (inputs counted in graph order) is Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC'11; Random123's `philox4x32_R` with R = 10) of
//   counter (i mod 2^32, i div 2^32, s, 0), key (SEED mod 2^32, SEED div 2^32),
// with i the global C-order index of x, mapped to [-1, 1): f64 takes the top 53 bits of w0·2^32 + w1,
// f32 the top 24 bits of w0, as an integer k of b bits giving 2·k/2^b − 1 (exact in the type). A value
// depends only on (SEED, s, i), never on how the tensor is cut into blocks or spread over ranks.

#include <einrel_BlockGrid.hpp>
#include <einrel_Bound.hpp>
#include <einrel_Error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace einrel {

using Philox4x32Counter = Kokkos::Array<std::uint32_t, 4>;
using Philox4x32Key = Kokkos::Array<std::uint32_t, 2>;

// Philox4x32 with 10 rounds (Random123's multipliers and Weyl key increments).
KOKKOS_INLINE_FUNCTION Philox4x32Counter philox4x32_10(Philox4x32Counter c, Philox4x32Key k) {
  constexpr std::uint64_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    const std::uint64_t p0 = m0 * c[0], p1 = m1 * c[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = Philox4x32Counter{{hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0}};
  }
  return c;
}

// The value of element `index` (global C order) of input `stream` for `seed`, in [-1, 1).
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar counter_random(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const Philox4x32Counter w = philox4x32_10(
      Philox4x32Counter{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), stream, 0u}},
      Philox4x32Key{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}});
  if constexpr (sizeof(Scalar) == 4) {
    return static_cast<Scalar>(w[0] >> 8) * Scalar(0x1p-23) - Scalar(1);
  } else {
    const std::uint64_t bits = ((static_cast<std::uint64_t>(w[0]) << 32) | w[1]) >> 11;
    return static_cast<Scalar>(bits) * Scalar(0x1p-52) - Scalar(1);
  }
}

// Fills `block`, the C-order elements of `box` of a tensor of bound `bound`, with counter_random values
// of (seed, stream). Asynchronous on `exec`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_counter_random(const ExecutionSpace& exec, std::uint64_t seed, std::uint32_t stream, const Bound& bound,
                         const Box& box, const Kokkos::View<Scalar*, MemorySpace>& block) {
  const int rank = static_cast<int>(bound.size());
  if (static_cast<Extent>(block.extent(0)) != box.size())
    throw Error("fill_counter_random: the block holds " + std::to_string(block.extent(0)) + " elements, its box " +
                std::to_string(box.size()));
  Kokkos::Array<Extent, max_rank> extent{}, lo{}, stride{};
  Extent s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    extent[d] = box.hi[d] - box.lo[d];
    lo[d] = box.lo[d];
    stride[d] = s;
    s *= bound[d];
  }
  Kokkos::parallel_for(
      "einrel::fill_counter_random", Kokkos::RangePolicy<ExecutionSpace>(exec, 0, box.size()),
      KOKKOS_LAMBDA(const Extent local) {
        Extent rest = local, global = 0;
        for (int d = rank - 1; d >= 0; --d) {
          global += (lo[d] + rest % extent[d]) * stride[d];
          rest /= extent[d];
        }
        block(local) = counter_random<Scalar>(seed, stream, static_cast<std::uint64_t>(global));
      });
}

}  // namespace einrel

#endif
