#include <einrel_LowerBound.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>

namespace einrel::partition {

std::optional<ProductShape> product_shape(const ResolvedEinSum& r) {
  const EinSum& e = r.einsum();
  if (e.arity() != 2) return std::nullopt;
  ProductShape s;
  for (char l : r.unique_labels()) {
    const bool x = e.inputs[0].find(l) != std::string::npos, y = e.inputs[1].find(l) != std::string::npos,
               z = e.output.find(l) != std::string::npos;
    const auto n = static_cast<double>(r.extent(l));
    if (x && y && z)
      s.batch *= n;
    else if (x && y)
      s.inner *= n;
    else if (x && z)
      s.rows *= n;
    else if (y && z)
      s.cols *= n;
    else
      return std::nullopt;  // summed in one operand only: not a product of X and Y as they are
  }
  return s;
}

namespace {

// The fewest elements of A (d1 x d3), B (d3 x d2) and C (d1 x d2) that a rank computing F = d1 d2 d3 / P of
// the multiply-adds must touch, d1 >= d2 >= d3. A rank's multiply-adds touch at least the three projections
// of its part of the d1 x d2 x d3 iteration space, whose product is at least F² (Loomis–Whitney); the sum is
// least for a brick a x b x c (a ≤ d1, b ≤ d2, c ≤ d3): a cube while it fits (three large dimensions,
// P ≥ d1 d2 / d3²), else c = d3 and a square a = b (two, P ≥ d1 / d2), else c = d3, b = d2 (one).
double least_touched(double d1, double d2, double d3, double p) {
  if (p >= d1 * d2 / (d3 * d3)) return 3 * std::pow(d1 * d2 * d3 / p, 2.0 / 3.0);
  if (p >= d1 / d2) return d1 * d2 / p + 2 * std::sqrt(d1 * d2 * d3 * d3 / p);
  return d1 * d2 / p + d2 * d3 + d1 * d3 / p;
}

}  // namespace

double receive_lower_bound(const ProductShape& shape, double ranks) {
  // A batch of β independent products: a rank's least touched data for a share of the terms is concave in the
  // share, so it is least with whole products, and with one partial product when a rank holds less than one.
  // With β ≥ P a rank can hold whole products of its own (bound 0); otherwise it is one product on P / β ranks.
  if (ranks <= shape.batch) return 0;
  const double p = ranks / shape.batch;
  std::array<double, 3> d{shape.rows, shape.cols, shape.inner};
  std::sort(d.begin(), d.end(), std::greater<>());
  const double share = (d[0] * d[1] + d[0] * d[2] + d[1] * d[2]) / p;
  return std::max(0.0, least_touched(d[0], d[1], d[2], p) - share);
}

double words_beyond_share(const ProductShape& s, double accessed, double ranks) {
  const double x = s.batch * s.rows * s.inner, y = s.batch * s.inner * s.cols, z = s.batch * s.rows * s.cols;
  return accessed - (x + y + z) / ranks;
}

}  // namespace einrel::partition
