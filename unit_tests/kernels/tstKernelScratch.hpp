#include <einrel_BlockPool.hpp>
#include <einrel_CublasGemm.hpp>
#include <einrel_EinsumKernel.hpp>
#include <einrel_KernelScratch.hpp>
#include <einrel_SimdIsa.hpp>
#include <einrel_Tensor.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace einrel;

// einsum_scratch lists exactly what one kernel call takes from an emptied pool: as many fresh
// allocations (`count` of them), of the same size classes.
void check_scratch(std::size_t count, EinSum e, const std::vector<Bound>& bounds, bool accumulate = false) {
  SCOPED_TRACE(e.equation() + " join=" + std::string(op_name(e.join)) + " agg=" + std::string(op_name(e.agg)) +
               (accumulate ? " accumulate" : ""));
  using T = Tensor<double, TEST_MEMSPACE>;
  TEST_EXECSPACE exec;
  const ResolvedEinSum resolved = resolve(e, bounds);
  const T x("x", bounds[0]), z("z", resolved.output_bound());
  std::optional<T> y;
  if (bounds.size() > 1) y = T("y", bounds[1]);
  auto& pool = BlockPool<TEST_MEMSPACE>::instance();
  pool.release_unused();
  pool.reset_statistics();
  const std::size_t held = pool.statistics().bytes_held;
  kernels::einsum(exec, resolved, x, y, z, accumulate);
  exec.fence();
  const std::vector<Extent> scratch = kernels::einsum_scratch(
      resolved, accumulate,
      {Dtype::f64, exec.concurrency(), Kokkos::SpaceAccessibility<TEST_EXECSPACE, Kokkos::HostSpace>::accessible,
       kernels::strided_batches<TEST_EXECSPACE>()});
  std::size_t bytes = 0;
  for (Extent n : scratch) bytes += BlockPool<TEST_MEMSPACE>::size_class(n) * sizeof(double);
  EXPECT_EQ(scratch.size(), count);
  EXPECT_EQ(pool.statistics().fresh_allocations, static_cast<long long>(scratch.size()));
  EXPECT_EQ(pool.statistics().peak_bytes_held - held, bytes);
}

TEST(TEST_CATEGORY, KernelScratchIsWhatTheKernelTakes) {
  auto parse = [](const char* eq, std::size_t n) { return EinSum::parse(eq, n); };
  check_scratch(0, parse("ij,jk->ik", 2), {{40, 30}, {30, 20}});                // GEMM in place
  check_scratch(1, parse("abcd,cdef->feba", 2), {{3, 4, 5, 6}, {5, 6, 7, 2}});  // packed result
  check_scratch(1, parse("ikj,jl->il", 2), {{30, 8, 20}, {20, 25}});            // X reduced over k
  // X packed, unless the GEMM takes strided batches: then X_b = [j][i] rows of [j][b][i] in place.
  check_scratch(kernels::strided_batches<TEST_EXECSPACE>() ? 0 : 1, parse("jbi,bjk->bik", 2),
                {{20, 4, 18}, {4, 20, 17}});
  check_scratch(0, parse("ij,jk->ik", 2), {{40, 30}, {30, 20}}, true);  // accumulating GEMM
  // The vector kernels of the common pairs (host spaces with AVX2) pack X and Y into panels of their own.
  const std::size_t panels =
      Kokkos::SpaceAccessibility<TEST_EXECSPACE, Kokkos::HostSpace>::accessible && kernels::simd::best_isa() ? 2 : 0;
  EinSum distance = parse("ij,kj->ik", 2);
  distance.join = JoinOp::sqdiff;
  check_scratch(panels, distance, {{40, 30}, {20, 30}});  // blocked generic, as is
  EinSum tropical = parse("ij,jk->ki", 2);
  tropical.join = JoinOp::add;
  tropical.agg = AggOp::max;
  check_scratch(2 + panels, tropical, {{40, 30}, {30, 20}});  // blocked generic: Y and the result arranged
  check_scratch(3 + panels, tropical, {{40, 30}, {30, 20}}, true);
  EinSum scalar = tropical;  // no vector kernel for this pair
  scalar.join = JoinOp::absdiff;
  scalar.agg = AggOp::sum;
  check_scratch(2, scalar, {{40, 30}, {30, 20}});
  check_scratch(1, parse("ij->", 1), {{3, 50000}});           // a long fold in chunks
  check_scratch(0, parse("ij->i", 1), {{4000, 30}});          // one thread per output
  check_scratch(0, parse("ij,j->ij", 2), {{300, 50}, {50}});  // element-wise rows
}

}  // namespace
