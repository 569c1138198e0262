#ifndef EINREL_TESTHELPERS_HPP
#define EINREL_TESTHELPERS_HPP

// Shared test helpers: seeded random data, a naive loop-nest EinSum reference, and tolerances.

#include <einrel_BlockGrid.hpp>
#include <einrel_Bound.hpp>
#include <einrel_EinSum.hpp>
#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace einrel::test {

template <class Scalar>
std::vector<Scalar> random_values(const Bound& b, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<Scalar> v(num_elements(b));
  for (auto& x : v) x = static_cast<Scalar>(dist(gen));
  return v;
}

// The scalar ops of docs/architecture.md, written out again here so that the reference shares no code with einrel.
inline double reference_join(JoinOp op, double x, double y) {
  switch (op) {
    case JoinOp::mul:
      return x * y;
    case JoinOp::add:
      return x + y;
    case JoinOp::sub:
      return x - y;
    case JoinOp::div:
      return x / y;
    case JoinOp::max:
      return std::max(x, y);
    case JoinOp::min:
      return std::min(x, y);
    case JoinOp::sqdiff:
      return (x - y) * (x - y);
    case JoinOp::absdiff:
      return std::abs(x - y);
    case JoinOp::eq:
      return x == y ? 1.0 : 0.0;
    case JoinOp::first:
      return x;
  }
  throw std::logic_error("join op");
}

inline double reference_agg(AggOp op, double acc, double v) {
  switch (op) {
    case AggOp::sum:
      return acc + v;
    case AggOp::max:
      return std::max(acc, v);
    case AggOp::min:
      return std::min(acc, v);
    case AggOp::prod:
      return acc * v;
  }
  throw std::logic_error("agg op");
}

inline double reference_map(const MapOp& f, double x) {
  switch (f.kind) {
    case MapKind::identity:
      return x;
    case MapKind::exp:
      return std::exp(x);
    case MapKind::log:
      return std::log(x);
    case MapKind::neg:
      return -x;
    case MapKind::abs:
      return std::abs(x);
    case MapKind::relu:
      return x > 0 ? x : 0.0;
    case MapKind::square:
      return x * x;
    case MapKind::sqrt:
      return std::sqrt(x);
    case MapKind::tanh:
      return std::tanh(x);
    case MapKind::sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case MapKind::scale:
      return f.constant * x;
    case MapKind::shift:
      return x + f.constant;
    case MapKind::pow:
      return std::pow(x, f.constant);
    case MapKind::sign:
      return std::isnan(x) ? x : static_cast<double>((x > 0) - (x < 0));
  }
  throw std::logic_error("map");
}

// Z = einsum(e, operands...) by the definition: visit every assignment of the unique labels, join the
// matching elements (left to right for more than two operands), map, and ⊕ the result into the output
// element. Double precision.
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
  std::vector<bool> seen(z.size(), false);
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
    double value = operands[0][offset(e.inputs[0], bounds[0])];
    for (std::size_t k = 1; k < operands.size(); ++k)
      value = reference_join(e.join, value, operands[k][offset(e.inputs[k], bounds[k])]);
    value = reference_map(e.map, value);
    const Extent o = offset(e.output, out_bound);
    z[o] = seen[o] ? reference_agg(e.agg, z[o], value) : value;
    seen[o] = true;
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

// Calls f(flat) for every element of `box` in C order, flat being its C-order index in an array of
// bound `array` whose corner is at `origin` (the box's own coordinates minus origin index the array).
template <class F>
void for_each_element(const Box& box, const Bound& array, const std::vector<Extent>& origin, F&& f) {
  const auto strides = c_order_strides(array);
  std::vector<Extent> at = box.lo;
  for (Extent n = 0; n < box.size(); ++n) {
    Extent flat = 0;
    for (std::size_t d = 0; d < at.size(); ++d) flat += (at[d] - origin[d]) * strides[d];
    f(flat);
    for (int d = static_cast<int>(at.size()) - 1; d >= 0; --d) {
      if (++at[d] < box.hi[d]) break;
      at[d] = box.lo[d];
    }
  }
}

// The message of the einrel::Error f throws, or "no error".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace einrel::test

#endif
