#ifndef EINREL_KERNELSCRATCH_HPP
#define EINREL_KERNELSCRATCH_HPP

#include <einrel_Bound.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <vector>

namespace einrel::kernels {

// The temporaries one kernels::einsum call of `resolved` takes from the BlockPool, as element counts, all
// alive at once during the call: reduced and packed operands and the packed result of a contraction, the
// arranged operands and result of the blocked generic kernel, the chunk partials of a long generic fold.
// `accumulate` as in the call, `threads` the execution space's concurrency. The engine's memory warm-up
// takes them before the timed execution and its dry run counts them; both follow the kernel's own
// choices through the predicates einsum() uses.
std::vector<Extent> einsum_scratch(const ResolvedEinSum& resolved, bool accumulate, Extent threads);

}  // namespace einrel::kernels

#endif
