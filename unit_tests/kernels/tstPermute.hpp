#include <einrel_EinSum.hpp>
#include <einrel_Permute.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace einrel;

constexpr bool host_space = Kokkos::SpaceAccessibility<TEST_EXECSPACE, Kokkos::HostSpace>::accessible;

// Every way this backend can run a transpose: the portable functor and, on the host, each vector ISA.
std::vector<std::optional<kernels::simd::Isa>> transpose_paths() {
  std::vector<std::optional<kernels::simd::Isa>> paths = {std::nullopt};
  if (host_space)
    for (const kernels::simd::Isa isa : kernels::simd::supported_isas()) paths.push_back(isa);
  return paths;
}

std::string path_name(const std::optional<kernels::simd::Isa>& isa) {
  return isa ? kernels::simd::isa_name(*isa) : "portable";
}

// permute on random data against the identity einsum from -> to (plus the old out with add), by every path.
template <class Scalar>
void check_permutation(const std::string& from, const std::string& to, const Bound& bound, bool add) {
  const auto in = test::random_values<Scalar>(bound, 5), base = test::random_values<Scalar>(bound, 6);
  Bound out_bound;
  for (char c : to) out_bound.push_back(bound[from.find(c)]);
  auto expected =
      test::reference_einsum(EinSum::parse(from + "->" + to, 1), {bound}, std::vector<std::vector<Scalar>>{in});
  if (add)
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += base[i];
  for (const auto& isa : transpose_paths()) {
    const auto out =
        tensor_from_host<TEST_MEMSPACE>("out", out_bound, add ? base : std::vector<Scalar>(base.size(), 0));
    TEST_EXECSPACE exec;
    kernels::permute_using(exec, isa, tensor_from_host<TEST_MEMSPACE>("in", bound, in), from, out, to, add);
    exec.fence();
    SCOPED_TRACE(from + "->" + to + " " + to_string(bound) + (add ? " add " : " ") + path_name(isa));
    test::expect_all_close(tensor_to_host(out), expected, test::sum_tolerance<Scalar>(2));
  }
}

TEST(TEST_CATEGORY, PermuteIsCacheBlockedTranspose) {
  check_permutation<double>("ij", "ji", {70, 45}, false);
  check_permutation<double>("ij", "ij", {7, 45}, true);
  check_permutation<float>("abcd", "dbca", {3, 33, 2, 40}, false);
  check_permutation<float>("abcd", "badc", {5, 1, 7, 3}, true);
  check_permutation<double>("abcde", "eadcb", {2, 3, 4, 5, 6}, false);
  check_permutation<double>("", "", {}, true);
  check_permutation<double>("a", "a", {1}, false);
  Tensor<double, TEST_MEMSPACE> a("a", {2, 3}), b("b", {2, 3});
  EXPECT_THROW(kernels::permute(TEST_EXECSPACE{}, a, "ij", b, "ji"), Error);
}

// Transposes ragged against the vector tiles (64 x 256) and blocks (4 to 16): partial tiles and blocks on
// either side, single rows and columns, outer dimensions around the transposed pair, with add.
TEST(TEST_CATEGORY, PermuteTransposesRaggedShapes) {
  for (const bool add : {false, true}) {
    check_permutation<double>("ij", "ji", {130, 67}, add);
    check_permutation<float>("ij", "ji", {67, 130}, add);
    check_permutation<double>("ij", "ji", {1, 9}, add);
    check_permutation<float>("ij", "ji", {9, 1}, add);
    check_permutation<double>("ij", "ji", {64, 128}, add);
    check_permutation<float>("ij", "ji", {72, 64}, add);
    check_permutation<double>("abc", "cba", {3, 17, 70}, add);
    check_permutation<float>("abc", "acb", {2, 65, 9}, add);
    check_permutation<double>("abcd", "dcba", {5, 4, 3, 19}, add);
    check_permutation<float>("ij", "ji", {300, 70}, add);
    check_permutation<double>("ij", "ji", {260, 129}, add);
  }
}

// The vector tile itself, inside larger arrays (strides beyond the tile), with non-temporal stores on an
// aligned output and on one they cannot take (plain stores instead), and with add.
template <class Scalar>
void check_vector_tile(kernels::simd::Isa isa) {
  constexpr int in_stride = 83, out_stride = 96, na = 61, nb = 70;  // in: nb rows of na, out: na rows of nb
  const auto in = test::random_values<Scalar>({nb * in_stride}, 11);
  const auto base = test::random_values<Scalar>({na * out_stride + 64}, 12);
  for (const int mode : {0, 1, 2}) {  // stream, stream refused (misaligned), add
    std::vector<Scalar> buffer = base;
    const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(buffer.data());
    Scalar* out = buffer.data() + ((64 - address % 64) % 64) / sizeof(Scalar) + (mode == 1 ? 1 : 0);
    const std::vector<Scalar> before(out, out + na * out_stride);
    kernels::simd::transpose_tile(isa, in.data(), in_stride, out, out_stride, na, nb, mode == 2, mode != 2);
    SCOPED_TRACE(std::string(kernels::simd::isa_name(isa)) + " mode " + std::to_string(mode));
    for (int x = 0; x < na; ++x)
      for (int y = 0; y < out_stride; ++y) {
        const Scalar v = y < nb ? in[y * in_stride + x] : Scalar(0);
        const Scalar expected = y >= nb ? before[x * out_stride + y] : mode == 2 ? before[x * out_stride + y] + v : v;
        ASSERT_EQ(out[x * out_stride + y], expected) << "x " << x << " y " << y;
      }
  }
}

TEST(TEST_CATEGORY, VectorTransposeTileStreamsAndAdds) {
  // if constexpr: on a device backend the loop would be unreachable code, which nvcc warns about.
  if constexpr (!host_space) {
    GTEST_SKIP() << "no vector ISA for this backend";
  } else {
    if (kernels::simd::supported_isas().empty()) GTEST_SKIP() << "no vector ISA on this CPU";
    for (const kernels::simd::Isa isa : kernels::simd::supported_isas()) {
      check_vector_tile<double>(isa);
      check_vector_tile<float>(isa);
    }
  }
}

// Device memory allocations seen by Kokkos' tools interface while a check runs.
std::uint64_t allocations = 0;
void count_allocation(Kokkos::Tools::SpaceHandle, const char*, const void*, std::uint64_t) { ++allocations; }

// Regression: Kokkos 3.4's Cuda backend allocated an instance's team scratch (a cudaMalloc and a blocking
// copy) at every launch of the transposing team kernel, which then waited for every kernel before it.
TEST(TEST_CATEGORY, RepeatedPermutationsAllocateNothing) {
  const Bound bound{64, 3, 40};
  const auto in = tensor_from_host<TEST_MEMSPACE>("in", bound, test::random_values<double>(bound, 7));
  const Tensor<double, TEST_MEMSPACE> transposed("transposed", {40, 3, 64}), rows("rows", {3, 64, 40});
  TEST_EXECSPACE exec;
  auto permute_all = [&] {
    kernels::permute(exec, in, "abc", transposed, "cba");
    kernels::permute(exec, in, "abc", transposed, "cba", true);
    kernels::permute(exec, in, "abc", rows, "bac");
  };
  permute_all();  // the first calls may set up what later ones reuse
  exec.fence();
  allocations = 0;
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  for (int i = 0; i < 3; ++i) permute_all();
  exec.fence();
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  EXPECT_EQ(allocations, 0u);
  const auto out = tensor_to_host(transposed);
  const auto expected = test::reference_einsum(EinSum::parse("abc->cba", 1), {bound},
                                               std::vector<std::vector<double>>{tensor_to_host(in)});
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_DOUBLE_EQ(out[i], 2 * expected[i]);
}

}  // namespace
