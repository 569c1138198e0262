#ifndef EINREL_TESTHELPERS_HPP
#define EINREL_TESTHELPERS_HPP

// Shared test helpers: seeded random data, a naive loop-nest EinSum reference, and tolerances.

#include <einrel_Bound.hpp>
#include <einrel_EinSum.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace einrel::test {

template <class Scalar>
std::vector<Scalar> random_values(const Bound& b, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Scalar> v(num_elements(b));
  for (auto& x : v) x = static_cast<Scalar>(dist(gen));
  return v;
}

// Z = einsum(e, X[, Y]) by the definition: visit every assignment of the unique labels, multiply the
// matching elements and add them to the output element. Double precision, no shared code with einrel.
template <class Scalar>
std::vector<double> reference_einsum(const EinSum& e, const std::vector<Bound>& bounds,
                                     const std::vector<std::vector<Scalar>>& operands) {
  std::map<char, Extent> extent;
  for (std::size_t k = 0; k < e.inputs.size(); ++k)
    for (std::size_t d = 0; d < e.inputs[k].size(); ++d) extent[e.inputs[k][d]] = bounds[k][d];
  std::string labels;
  for (const auto& [c, n] : extent) labels += c;
  Bound out_bound;
  for (char c : e.output) out_bound.push_back(extent[c]);
  std::vector<double> z(num_elements(out_bound), 0.0);
  std::map<char, Extent> at;
  for (char c : labels) at[c] = 0;
  auto offset = [&](const std::string& ls, const Bound& b) {
    Extent o = 0;
    for (std::size_t d = 0; d < ls.size(); ++d) o = o * b[d] + at[ls[d]];
    return o;
  };
  Extent total = 1;
  for (char c : labels) total *= extent[c];
  for (Extent n = 0; n < total; ++n) {
    Extent rest = n;
    for (int l = static_cast<int>(labels.size()) - 1; l >= 0; --l) {
      at[labels[l]] = rest % extent[labels[l]];
      rest /= extent[labels[l]];
    }
    double prod = 1.0;
    for (std::size_t k = 0; k < operands.size(); ++k) prod *= operands[k][offset(e.inputs[k], bounds[k])];
    z[offset(e.output, out_bound)] += prod;
  }
  return z;
}

// Tolerance for results that sum `terms` products of values in [-1, 1], relative to the largest
// magnitude: a few units of rounding per term, growing like sqrt(terms) for random signs.
template <class Scalar>
double sum_tolerance(Extent terms) {
  return 16 * std::numeric_limits<Scalar>::epsilon() * std::sqrt(static_cast<double>(std::max<Extent>(terms, 1)));
}

// Expects |actual - expected| <= tol * max(1, max|expected|) elementwise.
template <class Scalar>
void expect_all_close(const std::vector<Scalar>& actual, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  double scale = 1.0;
  for (double x : expected) scale = std::max(scale, std::abs(x));
  for (std::size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(static_cast<double>(actual[i]), expected[i], tol * scale) << "element " << i;
}

}  // namespace einrel::test

#endif
