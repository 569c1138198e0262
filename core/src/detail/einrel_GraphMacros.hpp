#ifndef EINREL_GRAPHMACROS_HPP
#define EINREL_GRAPHMACROS_HPP

#include <einrel_EinSum.hpp>

namespace einrel {

// True when an einsum with these ops may be computed pairwise: ⊗ must distribute over ⊕ and be
// associative, which holds for (mul, sum), (add, max) and (add, min), with no map.
bool decomposes_pairwise(const EinSum& e);

}  // namespace einrel

#endif
