#ifndef EINREL_VIABLE_HPP
#define EINREL_VIABLE_HPP

#include <einrel_PartitionVector.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <vector>

namespace einrel::partition {

// viable(e, p) of eindecomp.txt §8.1 and §8.3 as docs/planner.md states it: every partition vector over the
// unique labels of the resolved EinSum e with power-of-two parts, no label cut into more parts than its extent, and
// product exactly p; when the extents cannot reach p, the vectors with the largest product below p (then exactly one:
// every label at its largest power of two). Order: lexicographic over the unique labels, the first label's parts
// largest first. Throws Error unless p is a power of two.
std::vector<PartitionVector> viable(const ResolvedEinSum& e, Extent p);

// Throws Error naming the valid choices unless p is a power of two.
void check_procs(Extent p);

// The largest k with 2^k <= n (n >= 1): log2 of the largest power of two a label of extent n can be cut into.
int floor_log2(Extent n);

}  // namespace einrel::partition

#endif
