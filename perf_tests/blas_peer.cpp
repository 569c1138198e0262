// The BLAS peer of perf_tests/single_node_bench.py: plain cblas_dgemm/cblas_sgemm outside Kokkos and
// outside einrel, on buffers allocated and touched once, `batch` row-major m x k by k x n products. Prints
// the median seconds of --reps timed calls after the first, their GFLOP/s (2·batch·m·n·k per call): the
// rate the machine's BLAS reaches on the multiply-adds of a contraction, and the seconds of the first
// call (which also sets up the BLAS's own threads and workspace).
//   einrel_blas_peer --batch B --m M --n N --k K [--reps R] [--dtype f64|f32]
#include "einrel_BenchOptions.hpp"
#include "einrel_BenchTiming.hpp"

#include <cblas.h>

#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

template <class Scalar, class Gemm>
double median_seconds(long batch, long m, long n, long k, int reps, Gemm gemm, double& first) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<Scalar> uniform(-1, 1);
  std::vector<Scalar> a(batch * m * k), b(batch * k * n), c(batch * m * n, Scalar(0));
  for (Scalar& v : a) v = uniform(rng);
  for (Scalar& v : b) v = uniform(rng);
  auto call = [&] {
    for (long i = 0; i < batch; ++i)
      gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, Scalar(1), a.data() + i * m * k, k, b.data() + i * k * n,
           n, Scalar(0), c.data() + i * m * n, n);
  };
  first = einrel::bench::median_seconds(1, call);
  return einrel::bench::median_seconds(reps, call);
}

}  // namespace

int main(int argc, char** argv) {
  const einrel::bench::Options options(argc, argv, {"--batch", "--m", "--n", "--k", "--reps", "--dtype"},
                                       "einrel_blas_peer --batch B --m M --n N --k K [--reps R] [--dtype f64|f32]");
  const long batch = options.number("--batch", 1), m = options.number("--m", 0), n = options.number("--n", 0),
             k = options.number("--k", 0);
  const int reps = static_cast<int>(options.number("--reps", 5));
  const std::string dtype = options.text("--dtype", "f64");
  if (batch < 1 || m < 1 || n < 1 || k < 1 || reps < 1 || (dtype != "f64" && dtype != "f32")) options.fail();
  double first = 0;
  const double seconds = dtype == "f64" ? median_seconds<double>(batch, m, n, k, reps, cblas_dgemm, first)
                                        : median_seconds<float>(batch, m, n, k, reps, cblas_sgemm, first);
  std::cout << seconds << " " << 2.0 * batch * m * n * k / seconds * 1e-9 << " " << first << "\n";
  return 0;
}
