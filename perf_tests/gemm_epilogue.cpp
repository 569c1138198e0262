// Would fusing an element-wise epilogue into a vendor GEMM pay on this machine? Plain CBLAS outside einrel:
// a row-major m x k by k x n dgemm followed by one bias-and-ReLU pass over its result (what einrel runs: the
// product, then the element-wise vertex in place), against the same work done panel by panel: the GEMM of
// `panel` rows, then the epilogue on those rows while they are still in cache (what a fused kernel would do
// with a vendor GEMM that has no epilogue of its own). Prints, for each panel height, the median seconds of
// both sides (called alternately), the pass alone, and their ratio (> 1: the panels are faster).
//   einrel_gemm_epilogue --m 4096 --n 4096 --k 1024 [--reps 7] [--panels 256,1024]
#include "einrel_BenchOptions.hpp"
#include "einrel_BenchTiming.hpp"

#include <cblas.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

// rows [first, last) of the m x n result c: c = max(c + bias, 0), threads over rows
void bias_relu(double* c, const double* bias, long n, long first, long last) {
#pragma omp parallel for
  for (long i = first; i < last; ++i)
    for (long j = 0; j < n; ++j) {
      const double v = c[i * n + j] + bias[j];
      c[i * n + j] = v > 0 ? v : 0;
    }
}

}  // namespace

int main(int argc, char** argv) {
  const einrel::bench::Options options(argc, argv, {"--m", "--n", "--k", "--reps", "--panels"},
                                       "einrel_gemm_epilogue [--m M] [--n N] [--k K] [--reps R] [--panels P1,P2,...]");
  const long m = options.number("--m", 4096), n = options.number("--n", 4096), k = options.number("--k", 1024);
  const int reps = static_cast<int>(options.number("--reps", 7));
  std::vector<long> panels;
  std::istringstream list(options.text("--panels", "256,512,1024,2048"));
  for (std::string p; std::getline(list, p, ',');) panels.push_back(std::stol(p));
  if (m < 1 || n < 1 || k < 1 || reps < 1 || panels.empty()) options.fail();
  for (long p : panels)
    if (p < 1) options.fail();
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> a(m * k), b(k * n), c(m * n, 0.0), bias(n);
  for (double& v : a) v = uniform(rng);
  for (double& v : b) v = uniform(rng);
  for (double& v : bias) v = uniform(rng);
  auto gemm = [&](long first, long rows) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, k, 1.0, a.data() + first * k, k, b.data(), n, 0.0,
                c.data() + first * n, n);
  };
  std::cout << "panel,gemm_then_pass_s,panels_s,pass_s,ratio\n";
  for (long panel : panels) {
    const auto [whole, fused] = einrel::bench::alternating_median_seconds(
        reps,
        [&] {
          gemm(0, m);
          bias_relu(c.data(), bias.data(), n, 0, m);
        },
        [&] {
          for (long first = 0; first < m; first += panel) {
            const long rows = std::min(panel, m - first);
            gemm(first, rows);
            bias_relu(c.data(), bias.data(), n, first, first + rows);
          }
        });
    const double pass = einrel::bench::median_seconds(reps, [&] { bias_relu(c.data(), bias.data(), n, 0, m); });
    std::cout << panel << "," << whole << "," << fused << "," << pass << "," << whole / fused << "\n";
  }
  return 0;
}
