#ifndef EINREL_KERNELSCRATCH_HPP
#define EINREL_KERNELSCRATCH_HPP

#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <optional>
#include <vector>

namespace einrel::kernels {

// The temporaries one kernels::einsum call of `resolved` takes from the BlockPool, as element counts, all
// alive at once during the call: reduced and packed operands and the packed result of a contraction, the
// arranged operands and result of the blocked generic kernel, the chunk partials of a long generic fold.
// `accumulate` as in the call. The engine's memory warm-up
// takes them before the timed execution and its dry run counts them; both follow the kernel's own
// choices through the predicates einsum() uses.
// Where the call runs: the dtype, the execution space's concurrency, whether it is a host space (which
// has vector kernels of its own for some ops) and whether its GEMMs take strided batches
// (strided_batches<ExecutionSpace>(), einrel_CublasGemm.hpp).
struct KernelTarget {
  Dtype dtype = Dtype::f64;
  Extent threads = 1;
  bool host = true;
  bool strided_batches = false;
};
std::vector<Extent> einsum_scratch(const ResolvedEinSum& resolved, bool accumulate, const KernelTarget& target);

// The vendor GEMM a kernels::einsum call of `resolved` makes once per batch index, if it makes one: a
// contraction whose batch is not run as many small matrices. Row-major C[rows][cols] = A[rows][inner] ·
// B[inner][cols], transposes aside.
struct GemmCall {
  Extent rows = 0, cols = 0, inner = 0;
  bool swapped = false;  // A is the second operand: a Z stored [n][m] is computed as Y^T X^T
};
std::optional<GemmCall> vendor_gemm_call(const ResolvedEinSum& resolved, const KernelTarget& target);

}  // namespace einrel::kernels

#endif
