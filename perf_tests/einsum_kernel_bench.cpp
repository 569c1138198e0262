// Times einrel's block kernels against plain CBLAS GEMM (OpenBLAS on this machine) doing the same
// multiply-adds, and the permutation kernel against a plain memcpy of the same bytes; both peers run on
// warm buffers allocated outside Kokkos, with the same thread count.
// Prints CSV: case,equation,shape,einrel_gflops,reference_gflops,ratio — medians of --reps runs of each
// side, called alternately; ratio = einrel rate / reference rate. A GFLOP/s is 2 element pairs (one
// multiply-add), so for the generic ⊗/⊕ rows the ratio is einrel's element-pair rate over GEMM's; for the
// permutation rows the rates are GB/s (read + write).
//   einrel_kernel_bench [--reps R] [--max-size N] [--dtype f64|f32] [--only SUBSTRING]
#include <einrel_EinsumKernel.hpp>
#include <einrel_Permute.hpp>
#include <einrel_Tensor.hpp>
#include "einrel_BenchTiming.hpp"

#include <cblas.h>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

void gemm(Extent m, Extent n, Extent k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}
void gemm(Extent m, Extent n, Extent k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

// Buffers outside Kokkos, every page written before any timing.
template <class Scalar>
std::vector<Scalar> warm_buffer(Extent size, unsigned seed) {
  std::vector<Scalar> v(size);
  for (Extent i = 0; i < size; ++i) v[i] = static_cast<Scalar>((i * 2654435761u + seed) % 1000) / Scalar(1000);
  return v;
}

// One einsum case: einrel's kernel on X, Y against batch x (m x k)·(k x n) CBLAS GEMMs on buffers of the
// same sizes (the multiply-adds an expert would hand to BLAS, without any rearranging).
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
  const auto a = warm_buffer<Scalar>(batch * m * k, 1), b = warm_buffer<Scalar>(batch * k * n, 2);
  auto c = warm_buffer<Scalar>(batch * m * n, 3);
  const auto [einrel_s, blas_s] = einrel::bench::alternating_median_seconds(
      reps,
      [&] {
        einrel::kernels::einsum(exec, e, x, std::optional(y), z);
        exec.fence();
      },
      [&] {
        for (Extent i = 0; i < batch; ++i)
          gemm(m, n, k, a.data() + i * m * k, b.data() + i * k * n, c.data() + i * m * n);
      });
  const double flops = 2.0 * batch * m * n * k;
  std::cout << name << "," << e.equation() << "," << shape_of(e, extent) << "," << flops / einrel_s * 1e-9 << ","
            << flops / blas_s * 1e-9 << "," << blas_s / einrel_s << std::endl;
}

// The permutation (packing) kernel against memcpy of the same bytes, one contiguous share per host thread.
template <class Scalar>
void bench_permute(const std::string& from, const std::string& to, const Bound& bound, int reps) {
  if (!selected("permute_bandwidth_GBps")) return;
  const auto in = random_tensor<Scalar>(bound, 3);
  Bound out_bound;
  for (char c : to) out_bound.push_back(bound[from.find(c)]);
  const einrel::Tensor<Scalar, Memory> out("out", out_bound);
  const auto source = warm_buffer<Scalar>(in.size(), 4);
  auto copy = warm_buffer<Scalar>(in.size(), 5);
  const Exec exec;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int threads = Host::concurrency();
  const std::size_t share = (source.size() + threads - 1) / threads;
  const auto [permute_s, copy_s] = einrel::bench::alternating_median_seconds(
      reps,
      [&] {
        einrel::kernels::permute(exec, in, from, out, to);
        exec.fence();
      },
      [&] {
        Kokkos::parallel_for("memcpy", Kokkos::RangePolicy<Host>(0, threads), [&](const int t) {
          const std::size_t begin = std::min(source.size(), t * share), end = std::min(source.size(), begin + share);
          std::memcpy(copy.data() + begin, source.data() + begin, (end - begin) * sizeof(Scalar));
        });
        Kokkos::fence();
      });
  std::string shape;
  for (Extent e : bound) shape += (shape.empty() ? "" : "x") + std::to_string(e);
  const double bytes = 2.0 * sizeof(Scalar) * in.size();  // read + write
  std::cout << "permute_bandwidth_GBps," << from << "->" << to << "," << shape << "," << bytes / permute_s * 1e-9 << ","
            << bytes / copy_s * 1e-9 << "," << copy_s / permute_s << std::endl;
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
  // The generic ⊗/⊕ kernel on k-contiguous operands (a distance matrix's layout): the pairs with a vector
  // micro-kernel, then one that takes the scalar functor.
  const Extent g = std::min<Extent>(2048, max_size);
  const std::map<char, Extent> square = {{'i', g}, {'j', g}, {'k', g}};
  bench_einsum<Scalar>("generic_sqdiff_sum", "ij,kj->ik", square, reps, einrel::JoinOp::sqdiff, einrel::AggOp::sum);
  bench_einsum<Scalar>("generic_add_max", "ij,kj->ik", square, reps, einrel::JoinOp::add, einrel::AggOp::max);
  bench_einsum<Scalar>("generic_add_min", "ij,kj->ik", square, reps, einrel::JoinOp::add, einrel::AggOp::min);
  bench_einsum<Scalar>("generic_mul_max", "ij,kj->ik", square, reps, einrel::JoinOp::mul, einrel::AggOp::max);
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
  // What the peers run on: a GEMM peer slower than the machine allows would flatter every ratio.
  std::cout << "# Kokkos threads " << Exec::concurrency();
#ifdef OPENBLAS_VERSION
  std::cout << "; BLAS:" << OPENBLAS_VERSION << "with " << openblas_get_corename() << " kernels, "
            << openblas_get_num_threads() << " threads";
#endif
  std::cout << "\ncase,equation,shape,einrel_gflops,reference_gflops,ratio\n";
  if (dtype == "f32")
    run_all<float>(reps, max_size);
  else
    run_all<double>(reps, max_size);
  return 0;
}
