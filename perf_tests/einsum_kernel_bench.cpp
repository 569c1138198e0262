// Times einrel's block kernels against the vendor doing the same multiply-adds, and the permutation kernel
// against a plain copy of the same bytes; the peers run on warm buffers allocated outside Kokkos.
// On the host backends the GEMM peer is plain CBLAS (OpenBLAS on this machine) and the copy peer memcpy, one
// contiguous share per host thread, with the same thread count; times are host clocks around fenced calls.
// On the Cuda backend the GEMM peer is plain cuBLAS (cublas?gemm for one matrix, cublas?gemmStridedBatched
// for a batch) on cudaMalloc buffers and the copy peer cudaMemcpyAsync device to device, both on the stream
// of einrel's execution space instance, and both sides are timed with CUDA events on that stream, each sample
// a run of back-to-back calls (enough for ~2 GFLOP or ~256 MB, at most 64; `--calls N` fixes it), the way
// the engine issues the block calls of a vertex: einrel's host work per call overlaps the device's.
// Prints CSV: case,equation,shape,einrel_gflops,reference_gflops,ratio — medians of --reps runs of each
// side, called alternately; ratio = einrel rate / reference rate. A GFLOP/s is 2 element pairs (one
// multiply-add), so for the generic ⊗/⊕ rows the ratio is einrel's element-pair rate over GEMM's; for the
// permutation rows the rates are GB/s (read + write).
//   einrel_kernel_bench [--reps R] [--max-size N] [--dtype f64|f32] [--only SUBSTRING] [--calls N]
#include <einrel_EinsumKernel.hpp>
#include <einrel_Permute.hpp>
#include <einrel_Tensor.hpp>
#include "einrel_BenchTiming.hpp"

#include <cblas.h>
#include <Kokkos_Core.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using einrel::Bound;
using einrel::EinSum;
using einrel::Extent;

std::string only;          // run only cases whose name contains this
int calls_per_sample = 0;  // --calls: back-to-back calls per device sample (0: device_calls decides)

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

// Host values every page of which is written before any timing.
template <class Scalar>
std::vector<Scalar> warm_buffer(Extent size, unsigned seed) {
  std::vector<Scalar> v(size);
  for (Extent i = 0; i < size; ++i) v[i] = static_cast<Scalar>((i * 2654435761u + seed) % 1000) / Scalar(1000);
  return v;
}

#ifdef KOKKOS_ENABLE_CUDA
constexpr bool on_device = std::is_same_v<Exec, Kokkos::Cuda>;

void cuda_check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::cerr << call << ": " << cudaGetErrorString(status) << "\n";
    std::exit(1);
  }
}
void cublas_check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::cerr << call << ": " << cublasGetStatusString(status) << "\n";
    std::exit(1);
  }
}

// A cudaMalloc buffer holding warm_buffer's values: the peer's memory, outside Kokkos.
template <class Scalar>
class PeerBuffer {
 public:
  PeerBuffer(Extent size, unsigned seed) {
    cuda_check(cudaMalloc(&data_, std::max<Extent>(size, 1) * sizeof(Scalar)), "cudaMalloc");
    const auto host = warm_buffer<Scalar>(size, seed);
    cuda_check(cudaMemcpy(data_, host.data(), size * sizeof(Scalar), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  PeerBuffer(const PeerBuffer&) = delete;
  PeerBuffer& operator=(const PeerBuffer&) = delete;
  ~PeerBuffer() { cudaFree(data_); }
  Scalar* data() const { return data_; }

 private:
  Scalar* data_ = nullptr;
};

// Back-to-back calls per timed device sample: enough for about `work` units (flops, bytes) of `unit`
// each, at most 64, unless --calls sets it.
int device_calls(double unit, double work) {
  if (calls_per_sample > 0) return calls_per_sample;
  return static_cast<int>(std::clamp(std::ceil(work / unit), 1.0, 64.0));
}

// The medians of the host's time to issue one call of f and of g in the last event_median_seconds: where
// it exceeds the device's time per call, the device waits for the host.
std::pair<double, double> last_issue_seconds;

// Medians of f's and g's times per call on `stream` by CUDA events, alternating, after one warm-up call
// of each; each sample times `calls` calls issued back to back, as the engine issues a vertex's blocks.
template <class F, class G>
std::pair<double, double> event_median_seconds(int reps, int calls, cudaStream_t stream, F&& f, G&& g) {
  cudaEvent_t start, stop;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> issue_f, issue_g;  // host seconds per call to issue the calls
  auto time = [&](auto&& h, std::vector<double>& issue) {
    cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
    const auto issued = std::chrono::steady_clock::now();
    for (int call = 0; call < calls; ++call) h();
    issue.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - issued).count() / calls);
    cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return 1e-3 * ms / calls;
  };
  time(f, issue_f);
  time(g, issue_g);
  issue_f.clear();
  issue_g.clear();
  std::vector<double> tf, tg;
  for (int r = 0; r < reps; ++r) {
    tf.push_back(time(f, issue_f));
    tg.push_back(time(g, issue_g));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(issue_f.begin(), issue_f.end());
  std::sort(issue_g.begin(), issue_g.end());
  last_issue_seconds = {issue_f[issue_f.size() / 2], issue_g[issue_g.size() / 2]};
  std::sort(tf.begin(), tf.end());
  std::sort(tg.begin(), tg.end());
  return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

// Row-major C_i = A_i B_i (m x k times k x n) for i < batch, as a cuBLAS user writes it: column-major
// C^T = B^T A^T, one call for the whole batch (`one` the ?gemm, `strided` the ?gemmStridedBatched).
template <class Scalar, class One, class Strided>
cublasStatus_t peer_gemm_by(One one_gemm, Strided strided, cublasHandle_t h, Extent batch, Extent m, Extent n, Extent k,
                            const Scalar* a, const Scalar* b, Scalar* c) {
  const Scalar one = 1, zero = 0;
  if (batch == 1) return one_gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n);
  return strided(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, k * n, a, k, m * k, &zero, c, n, m * n, batch);
}
template <class Scalar>
cublasStatus_t peer_gemm(cublasHandle_t h, Extent batch, Extent m, Extent n, Extent k, const Scalar* a, const Scalar* b,
                         Scalar* c) {
  if constexpr (std::is_same_v<Scalar, double>)
    return peer_gemm_by(cublasDgemm, cublasDgemmStridedBatched, h, batch, m, n, k, a, b, c);
  else
    return peer_gemm_by(cublasSgemm, cublasSgemmStridedBatched, h, batch, m, n, k, a, b, c);
}

// einrel's time for f and the cuBLAS peer's for batch x (m x k)·(k x n), by events.
template <class Scalar, class F>
std::pair<double, double> time_against_vendor(int reps, const Exec& exec, Extent batch, Extent m, Extent n, Extent k,
                                              F&& f) {
  const PeerBuffer<Scalar> a(batch * m * k, 1), b(batch * k * n, 2), c(batch * m * n, 3);
  cublasHandle_t handle;
  cublas_check(cublasCreate(&handle), "cublasCreate");
  cublas_check(cublasSetStream(handle, exec.cuda_stream()), "cublasSetStream");
  const int calls = device_calls(2.0 * batch * m * n * k, 2e9);
  const auto times = event_median_seconds(reps, calls, exec.cuda_stream(), f, [&] {
    cublas_check(peer_gemm(handle, batch, m, n, k, a.data(), b.data(), c.data()), "peer gemm");
  });
  cublasDestroy(handle);
  return times;
}

// The permutation's time for f and cudaMemcpyAsync's for the same `size` elements, by events.
template <class Scalar, class F>
std::pair<double, double> time_against_copy(int reps, const Exec& exec, Extent size, F&& f) {
  const PeerBuffer<Scalar> source(size, 4), copy(size, 5);
  const int calls = device_calls(2.0 * sizeof(Scalar) * size, 256e6);
  return event_median_seconds(reps, calls, exec.cuda_stream(), f, [&] {
    cuda_check(cudaMemcpyAsync(copy.data(), source.data(), size * sizeof(Scalar), cudaMemcpyDeviceToDevice,
                               exec.cuda_stream()),
               "cudaMemcpyAsync");
  });
}
#else
constexpr bool on_device = false;

void gemm(Extent m, Extent n, Extent k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}
void gemm(Extent m, Extent n, Extent k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

// f's time and the CBLAS peer's for batch x (m x k)·(k x n): host clocks around fenced calls.
template <class Scalar, class F>
std::pair<double, double> time_against_cblas(int reps, Extent batch, Extent m, Extent n, Extent k, F&& f) {
  const auto a = warm_buffer<Scalar>(batch * m * k, 1), b = warm_buffer<Scalar>(batch * k * n, 2);
  auto c = warm_buffer<Scalar>(batch * m * n, 3);
  return einrel::bench::alternating_median_seconds(reps, f, [&] {
    for (Extent i = 0; i < batch; ++i) gemm(m, n, k, a.data() + i * m * k, b.data() + i * k * n, c.data() + i * m * n);
  });
}

// The permutation's time for f and memcpy's for the same `size` elements, one share per host thread.
template <class Scalar, class F>
std::pair<double, double> time_against_memcpy(int reps, Extent size, F&& f) {
  const auto source = warm_buffer<Scalar>(size, 4);
  auto copy = warm_buffer<Scalar>(size, 5);
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int threads = Host::concurrency();
  const std::size_t share = (source.size() + threads - 1) / threads;
  return einrel::bench::alternating_median_seconds(reps, f, [&] {
    Kokkos::parallel_for("memcpy", Kokkos::RangePolicy<Host>(0, threads), [&](const int t) {
      const std::size_t begin = std::min(source.size(), t * share), end = std::min(source.size(), begin + share);
      std::memcpy(copy.data() + begin, source.data() + begin, (end - begin) * sizeof(Scalar));
    });
    Kokkos::fence();
  });
}
#endif

// One einsum case: einrel's kernel on X, Y against batch x (m x k)·(k x n) vendor GEMMs on buffers of the
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
  // Resolved once, as the engine resolves each vertex when it plans, not at every call.
  const einrel::ResolvedEinSum resolved = einrel::resolve(e, {x.bound(), y.bound()});
  auto run = [&] {
    einrel::kernels::einsum(exec, resolved, x, std::optional(y), z);
    if (!on_device) exec.fence();
  };
#ifdef KOKKOS_ENABLE_CUDA
  const auto [einrel_s, blas_s] = time_against_vendor<Scalar>(reps, exec, batch, m, n, k, run);
#else
  const auto [einrel_s, blas_s] = time_against_cblas<Scalar>(reps, batch, m, n, k, run);
#endif
  const double flops = 2.0 * batch * m * n * k;
  std::cout << name << "," << e.equation() << "," << shape_of(e, extent) << "," << flops / einrel_s * 1e-9 << ","
            << flops / blas_s * 1e-9 << "," << blas_s / einrel_s << std::endl;
#ifdef KOKKOS_ENABLE_CUDA
  std::cout << "# host time to issue one call (us): einrel " << last_issue_seconds.first * 1e6 << ", cuBLAS "
            << last_issue_seconds.second * 1e6 << "; device time per call (us): einrel " << einrel_s * 1e6
            << ", cuBLAS " << blas_s * 1e6 << std::endl;
#endif
}

// The permutation (packing) kernel against a plain copy of the same bytes.
template <class Scalar>
void bench_permute(const std::string& from, const std::string& to, const Bound& bound, int reps) {
  if (!selected("permute_bandwidth_GBps")) return;
  const auto in = random_tensor<Scalar>(bound, 3);
  Bound out_bound;
  for (char c : to) out_bound.push_back(bound[from.find(c)]);
  const einrel::Tensor<Scalar, Memory> out("out", out_bound);
  const Exec exec;
  auto run = [&] {
    einrel::kernels::permute(exec, in, from, out, to);
    if (!on_device) exec.fence();
  };
#ifdef KOKKOS_ENABLE_CUDA
  const auto [permute_s, copy_s] = time_against_copy<Scalar>(reps, exec, in.size(), run);
#else
  const auto [permute_s, copy_s] = time_against_memcpy<Scalar>(reps, in.size(), run);
#endif
  std::string shape;
  for (Extent e : bound) shape += (shape.empty() ? "" : "x") + std::to_string(e);
  const double bytes = 2.0 * sizeof(Scalar) * in.size();  // read + write
  std::cout << "permute_bandwidth_GBps," << from << "->" << to << "," << shape << "," << bytes / permute_s * 1e-9 << ","
            << bytes / copy_s * 1e-9 << "," << copy_s / permute_s << std::endl;
#ifdef KOKKOS_ENABLE_CUDA
  std::cout << "# host time to issue one call (us): einrel " << last_issue_seconds.first * 1e6 << ", cudaMemcpyAsync "
            << last_issue_seconds.second * 1e6 << std::endl;
#endif
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
    } else if (flag == "--calls") {
      calls_per_sample = std::atoi(argv[i + 1]);
    } else if (flag == "--dtype") {
      dtype = argv[i + 1];
    } else {
      std::cerr << "unknown option " << flag
                << " (options: --reps R --max-size N --dtype f64|f32 --only SUBSTRING --calls N)\n";
      return 2;
    }
  }
  // What the peers run on: a GEMM peer slower than the machine allows would flatter every ratio.
#ifdef KOKKOS_ENABLE_CUDA
  cudaDeviceProp device;
  cuda_check(cudaGetDeviceProperties(&device, 0), "cudaGetDeviceProperties");
  int cublas_version = 0;
  cublasGetProperty(MAJOR_VERSION, &cublas_version);
  std::cout << "# device " << device.name << " (" << device.multiProcessorCount << " SMs); peers cuBLAS "
            << cublas_version << ".x and cudaMemcpyAsync, CUDA events\n";
#endif
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
