// The counter-based generator of `einrel run --random`: Random123's known answers for Philox4x32-10, and
// a tensor's values independent of how it is cut into boxes.
#include <einrel_CounterRandom.hpp>
#include <einrel_Tensor.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

namespace {

using namespace einrel;

// Row c: words 0-3 the counter, 4-5 the key; philox4x32_10's output replaces words 0-3, on the device
// (outside the test bodies: NVCC rejects lambdas there).
void philox_rows_in_place(const Kokkos::View<std::uint32_t* [10], TEST_MEMSPACE>& view) {
  Kokkos::parallel_for(
      "kat", Kokkos::RangePolicy<TEST_EXECSPACE>(0, view.extent(0)), KOKKOS_LAMBDA(const int c) {
        const Philox4x32Counter out = philox4x32_10(Philox4x32Counter{{view(c, 0), view(c, 1), view(c, 2), view(c, 3)}},
                                                    Philox4x32Key{{view(c, 4), view(c, 5)}});
        for (int w = 0; w < 4; ++w) view(c, w) = out[w];
      });
}

// Random123 tests/kat_vectors, the three "philox4x32 10" lines, computed on the device.
TEST(TEST_CATEGORY, Philox4x32MatchesRandom123KnownAnswers) {
  const std::uint32_t cases[3][10] = {{0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
                                       0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
                                       0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
  Kokkos::View<std::uint32_t* [10], TEST_MEMSPACE> view("kat", 3);
  auto host = Kokkos::create_mirror_view(view);
  for (int c = 0; c < 3; ++c)
    for (int w = 0; w < 10; ++w) host(c, w) = cases[c][w];
  Kokkos::deep_copy(view, host);
  philox_rows_in_place(view);
  Kokkos::deep_copy(host, view);
  for (int c = 0; c < 3; ++c)
    for (int w = 0; w < 4; ++w) EXPECT_EQ(host(c, w), cases[c][6 + w]) << "case " << c << " word " << w;
}

// The values of every box of a grid are the whole tensor's values at the box's positions, in [-1, 1),
// and differ between streams and seeds.
template <class Scalar>
void check_boxes_agree_with_whole() {
  const Bound bound{7, 5, 6};
  const Box all{{0, 0, 0}, bound};
  Tensor<Scalar, TEST_MEMSPACE> whole("whole", bound);
  fill_counter_random(TEST_EXECSPACE{}, 99, 3, bound, all, whole.view());
  const auto expected = tensor_to_host(whole);
  for (Scalar x : expected) EXPECT_TRUE(x >= Scalar(-1) && x < Scalar(1)) << x;
  const BlockGrid grid(bound, {3, 2, 4});
  for (Extent b = 0; b < grid.num_blocks(); ++b) {
    const Box box = grid.box(grid.key(b));
    Tensor<Scalar, TEST_MEMSPACE> block("block", box.extents());
    fill_counter_random(TEST_EXECSPACE{}, 99, 3, bound, box, block.view());
    std::vector<Scalar> want;
    test::for_each_element(box, bound, std::vector<Extent>(3, 0), [&](Extent flat) { want.push_back(expected[flat]); });
    EXPECT_EQ(tensor_to_host(block), want) << "block " << b;
  }
  for (auto [seed, stream] : {std::pair<std::uint64_t, std::uint32_t>{99, 4}, {100, 3}, {99ull << 32, 3}}) {
    Tensor<Scalar, TEST_MEMSPACE> other("other", bound);
    fill_counter_random(TEST_EXECSPACE{}, seed, stream, bound, all, other.view());
    const auto values = tensor_to_host(other);
    std::size_t same = 0;
    for (std::size_t i = 0; i < values.size(); ++i) same += values[i] == expected[i];
    EXPECT_LT(same, values.size() / 100 + 1);
  }
  EXPECT_THROW(fill_counter_random(TEST_EXECSPACE{}, 1, 0, bound, all, Kokkos::View<Scalar*, TEST_MEMSPACE>("s", 3)),
               Error);
}

TEST(TEST_CATEGORY, CounterRandomBoxesAgreeWithTheWholeF64) { check_boxes_agree_with_whole<double>(); }
TEST(TEST_CATEGORY, CounterRandomBoxesAgreeWithTheWholeF32) { check_boxes_agree_with_whole<float>(); }

// A few values fixed by the definition in docs/cli.md: counter (i, 0, stream, 0), key (seed, 0).
TEST(TEST_CATEGORY, CounterRandomMapsTheTopBitsToMinusOneToOne) {
  const Philox4x32Counter w = philox4x32_10(Philox4x32Counter{{5, 0, 2, 0}}, Philox4x32Key{{7, 0}});
  const double f64 = static_cast<double>(((static_cast<std::uint64_t>(w[0]) << 32) | w[1]) >> 11) * 0x1p-52 - 1;
  const float f32 = static_cast<float>(w[0] >> 8) * 0x1p-23f - 1;
  EXPECT_EQ(counter_random<double>(7, 2, 5), f64);
  EXPECT_EQ(counter_random<float>(7, 2, 5), f32);
}

}  // namespace
