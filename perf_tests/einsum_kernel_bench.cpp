// Times einrel's einsum kernel against KokkosBlas::gemm (vendor BLAS underneath) on the same data.
// Prints CSV: case,equation,shape,einrel_gflops,reference_gflops,ratio (medians of --reps runs).
//   einrel_kernel_bench [--reps R] [--sizes 256,512]
#include <einrel_EinsumKernel.hpp>
#include <einrel_Tensor.hpp>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;

template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void bench_matmul(einrel::Extent n, int reps) {
  // Column-major views of the row-major tensors hold their transposes, so C^T = B^T A^T is the same
  // product for GEMM (LayoutLeft is the layout Kokkos Kernels instantiates with the vendor BLAS).
  Kokkos::View<double**, Kokkos::LayoutLeft, Memory> a("A", n, n), b("B", n, n), c("C", n, n);
  Kokkos::Random_XorShift64_Pool<Exec> pool(1234);
  Kokkos::fill_random(a, pool, -1.0, 1.0);
  Kokkos::fill_random(b, pool, -1.0, 1.0);
  Kokkos::fence();
  using Flat = Kokkos::View<double*, Memory>;
  const einrel::Bound bound{n, n};
  const einrel::Tensor<double, Memory> ta(bound, Flat(a.data(), n * n)), tb(bound, Flat(b.data(), n * n)),
      tc(bound, Flat(c.data(), n * n));
  const einrel::EinSum e = einrel::EinSum::parse("ij,jk->ik", 2);
  const Exec exec;
  const double einrel_s = median_seconds(reps, [&] {
    einrel::kernels::einsum(exec, e, ta, std::optional(tb), tc);
    exec.fence();
  });
  const double blas_s = median_seconds(reps, [&] {
    KokkosBlas::gemm("N", "N", 1.0, b, a, 0.0, c);
    Kokkos::fence();
  });
  const double flops = 2.0 * n * n * n;
  std::cout << "square_matmul,ij;jk->ik," << n << "x" << n << "x" << n << "," << flops / einrel_s * 1e-9 << ","
            << flops / blas_s * 1e-9 << "," << blas_s / einrel_s << "\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int reps = 5;
  std::vector<einrel::Extent> sizes = {256, 512};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else if (flag == "--sizes") {
      sizes.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string s; std::getline(list, s, ',');) sizes.push_back(std::stoll(s));
    } else {
      std::cerr << "unknown option " << flag << "\n";
      return 2;
    }
  }
  std::cout << "case,equation,shape,einrel_gflops,reference_gflops,ratio\n";
  for (einrel::Extent n : sizes) bench_matmul(n, reps);
  return 0;
}
