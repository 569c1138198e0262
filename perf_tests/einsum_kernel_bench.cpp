// Times einrel's block kernels against the vendor BLAS GEMM (KokkosBlas::gemm, OpenBLAS on this machine)
// doing the same multiply-adds on the same data, and the permutation kernel against a plain copy.
// Prints CSV: case,equation,shape,einrel_gflops,reference_gflops,ratio — medians of --reps runs, ratio =
// einrel rate / reference rate (for the copy case the rates are GB/s).
//   einrel_kernel_bench [--reps R] [--max-size N] [--dtype f64|f32] [--only SUBSTRING]
#include <einrel_EinsumKernel.hpp>
#include <einrel_Permute.hpp>
#include <einrel_Tensor.hpp>
#include "einrel_BenchTiming.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using einrel::Bound;
using einrel::EinSum;
using einrel::Extent;

std::string only;  // run only cases whose name contains this

bool selected(const std::string& name) { return name.find(only) != std::string::npos; }

// Median of `reps` timed calls after one warm-up call.
template <class F>
double median_seconds(int reps, F&& f) {
  f();
  return einrel::bench::median_seconds(reps, f);
}

template <class Scalar>
einrel::Tensor<Scalar, Memory> random_tensor(const Bound& b, unsigned seed) {
  einrel::Tensor<Scalar, Memory> t("bench", b);
  Kokkos::Random_XorShift64_Pool<Exec> pool(seed);
  Kokkos::fill_random(t.view(), pool, Scalar(-1), Scalar(1));
  Kokkos::fence();
  return t;
}

std::string shape_of(const EinSum& e, const std::map<char, Extent>& extent) {
  std::string s;
  for (char c : e.unique_labels()) s += (s.empty() ? "" : "x") + std::string(1, c) + std::to_string(extent.at(c));
  return s;
}

// One einsum case: einrel's kernel on X, Y against batch x (m x k)·(k x n) vendor GEMMs on buffers of
// the same sizes (the multiply-adds an expert would hand to BLAS, without any rearranging).
template <class Scalar>
void bench_einsum(const std::string& name, const std::string& equation, const std::map<char, Extent>& extent, int reps,
                  einrel::JoinOp join = einrel::JoinOp::mul, einrel::AggOp agg = einrel::AggOp::sum) {
  if (!selected(name)) return;
  EinSum e = EinSum::parse(equation, 2);
  e.join = join;
  e.agg = agg;
  auto bound = [&](const std::string& labels) {
    Bound b;
    for (char c : labels) b.push_back(extent.at(c));
    return b;
  };
  const auto x = random_tensor<Scalar>(bound(e.inputs[0]), 1), y = random_tensor<Scalar>(bound(e.inputs[1]), 2);
  const einrel::Tensor<Scalar, Memory> z("Z", bound(e.output));
  Extent batch = 1, m = 1, n = 1, k = 1;
  for (char c : e.unique_labels()) {
    const bool in_x = e.inputs[0].find(c) != std::string::npos, in_y = e.inputs[1].find(c) != std::string::npos,
               in_z = e.output.find(c) != std::string::npos;
    (in_x && in_y ? (in_z ? batch : k) : in_x ? m : n) *= extent.at(c);
  }
  const Exec exec;
  const double einrel_s = median_seconds(reps, [&] {
    einrel::kernels::einsum(exec, e, x, std::optional(y), z);
    exec.fence();
  });
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const double blas_s = median_seconds(reps, [&] {
    for (Extent b = 0; b < batch; ++b) {
      const Matrix A(x.view().data() + b * m * k, m, k), B(y.view().data() + b * k * n, k, n),
          C(z.view().data() + b * m * n, m, n);
      KokkosBlas::gemm("N", "N", Scalar(1), A, B, Scalar(0), C);
    }
    Kokkos::fence();
  });
  const double flops = 2.0 * batch * m * n * k;
  std::cout << name << "," << e.equation() << "," << shape_of(e, extent) << "," << flops / einrel_s * 1e-9 << ","
            << flops / blas_s * 1e-9 << "," << blas_s / einrel_s << std::endl;
}

// The permutation (packing) kernel against Kokkos::deep_copy of the same bytes.
template <class Scalar>
void bench_permute(const std::string& from, const std::string& to, const Bound& bound, int reps) {
  if (!selected("permute_bandwidth_GBps")) return;
  const auto in = random_tensor<Scalar>(bound, 3);
  Bound out_bound;
  for (char c : to) out_bound.push_back(bound[from.find(c)]);
  const einrel::Tensor<Scalar, Memory> out("out", out_bound), copy("copy", bound);
  const Exec exec;
  const double permute_s = median_seconds(reps, [&] {
    einrel::kernels::permute(exec, in, from, out, to);
    exec.fence();
  });
  const double copy_s = median_seconds(reps, [&] {
    Kokkos::deep_copy(exec, copy.view(), in.view());
    exec.fence();
  });
  const double bytes = 2.0 * sizeof(Scalar) * in.size();  // read + write
  std::cout << "permute_bandwidth_GBps," << from << "->" << to << "," << einrel::to_string(bound) << ","
            << bytes / permute_s * 1e-9 << "," << bytes / copy_s * 1e-9 << "," << copy_s / permute_s << std::endl;
}

template <class Scalar>
void run_all(int reps, Extent max_size) {
  for (Extent s = 256; s <= max_size; s *= 2)
    bench_einsum<Scalar>("square_matmul", "ij,jk->ik", {{'i', s}, {'j', s}, {'k', s}}, reps);
  const Extent t = std::min<Extent>(1024, max_size);
  bench_einsum<Scalar>("transposed_A", "ji,jk->ik", {{'i', t}, {'j', t}, {'k', t}}, reps);
  bench_einsum<Scalar>("transposed_B", "ij,kj->ik", {{'i', t}, {'j', t}, {'k', t}}, reps);
  bench_einsum<Scalar>("transposed_Z", "ij,jk->ki", {{'i', t}, {'j', t}, {'k', t}}, reps);
  bench_einsum<Scalar>("skinny_inner", "ij,jk->ik", {{'i', 4096}, {'j', 64}, {'k', 4096}}, reps);
  bench_einsum<Scalar>("skinny_outer", "ij,jk->ik", {{'i', 64}, {'j', 8192}, {'k', 64}}, reps);
  bench_einsum<Scalar>("batched_small", "bij,bjk->bik", {{'b', 4096}, {'i', 16}, {'j', 16}, {'k', 16}}, reps);
  bench_einsum<Scalar>("batched_large", "bij,bjk->bik", {{'b', 8}, {'i', 512}, {'j', 512}, {'k', 512}}, reps);
  bench_einsum<Scalar>("permuted_multilabel", "abcd,cdef->feba",
                       {{'a', 32}, {'b', 32}, {'c', 32}, {'d', 32}, {'e', 32}, {'f', 32}}, reps);
  bench_einsum<Scalar>("permuted_multilabel", "ijk,jil->kl", {{'i', 64}, {'j', 64}, {'k', 512}, {'l', 512}}, reps);
  bench_einsum<Scalar>("attention_scores", "shd,thd->hst", {{'s', 512}, {'t', 512}, {'h', 8}, {'d', 64}}, reps);
  bench_einsum<Scalar>("linear", "bi,oi->bo", {{'b', 1024}, {'i', 1024}, {'o', 1024}}, reps);
  bench_einsum<Scalar>("generic_sqdiff_max", "ij,jk->ik", {{'i', 512}, {'j', 512}, {'k', 512}}, reps,
                       einrel::JoinOp::sqdiff, einrel::AggOp::max);
  bench_permute<Scalar>("ij", "ji", {4096, 4096}, reps);
  bench_permute<Scalar>("abcd", "dcba", {64, 64, 64, 64}, reps);
  bench_permute<Scalar>("abcd", "acbd", {64, 64, 64, 64}, reps);
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int reps = 5;
  Extent max_size = 2048;
  std::string dtype = "f64";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else if (flag == "--max-size") {
      max_size = std::atoll(argv[i + 1]);
    } else if (flag == "--only") {
      only = argv[i + 1];
    } else if (flag == "--dtype") {
      dtype = argv[i + 1];
    } else {
      std::cerr << "unknown option " << flag << " (options: --reps R --max-size N --dtype f64|f32 --only SUBSTRING)\n";
      return 2;
    }
  }
  std::cout << "case,equation,shape,einrel_gflops,reference_gflops,ratio\n";
  if (dtype == "f32")
    run_all<float>(reps, max_size);
  else
    run_all<double>(reps, max_size);
  return 0;
}
