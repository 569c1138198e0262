#ifndef EINREL_VIABLE_HPP
#define EINREL_VIABLE_HPP

#include <einrel_PartitionVector.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <vector>

namespace einrel::partition {

// viable(e, p) of eindecomp.txt §8.1 and §8.3 for any p >= 1 (docs/planner.md): every partition vector over the
// unique labels of the resolved EinSum e whose parts multiply to exactly p (the ordered factorizations of p, e.g.
// {i:3,j:2} at p = 6), no label cut into more parts than its extent. When the extents cannot reach p, the
// vectors whose product is the largest divisor of p they can reach (for a power of two p: exactly one, every
// label at its largest power of two). Order: lexicographic over the unique labels, the first label's parts
// largest first. Throws Error unless p >= 1.
std::vector<PartitionVector> viable(const ResolvedEinSum& e, Extent p);

// Throws Error unless p is a number of processors a planner can plan for: 1 <= p <= 2^40.
void check_procs(Extent p);

// The largest divisor of p that labels of these extents can multiply to, each cut at most its extent times:
// p itself unless the extents are too small (the product of every viable(e, p) vector).
Extent reachable_procs(const std::vector<Extent>& extents, Extent p);

// The divisors of n >= 1, increasing.
std::vector<Extent> divisors(Extent n);

}  // namespace einrel::partition

#endif
