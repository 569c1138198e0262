#ifndef EINREL_OPS_HPP
#define EINREL_OPS_HPP

#include <einrel_KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace einrel {

// The scalar functions of an EinSum (eindecomp.txt §3, DESIGN.md §2): the join ⊗ applied to each
// matching pair of elements, the unary map f applied to the joined (or, for a unary EinSum, the input)
// value, and the aggregation ⊕ over the labels not in the output. A contraction is (mul, sum).
// eq (1 where x == y, else 0) and first (x, broadcast over y's labels) exist for gradient graphs: masks of
// where a max or min won, and a gradient spread over the labels an aggregation removed.
enum class JoinOp { mul, add, sub, div, max, min, sqdiff, absdiff, eq, first };
enum class AggOp { sum, max, min, prod };
enum class MapKind { identity, exp, log, neg, abs, relu, square, sqrt, tanh, sigmoid, scale, shift, pow, sign };

// A unary map; scale, shift and pow carry a constant (c*x, x+c, x^c).
struct MapOp {
  MapKind kind = MapKind::identity;
  double constant = 0.0;

  static constexpr bool takes_constant(MapKind k) {
    return k == MapKind::scale || k == MapKind::shift || k == MapKind::pow;
  }
  friend bool operator==(const MapOp& a, const MapOp& b) { return a.kind == b.kind && a.constant == b.constant; }
  friend bool operator!=(const MapOp& a, const MapOp& b) { return !(a == b); }
};

std::string_view op_name(JoinOp op);
std::string_view op_name(AggOp op);
std::string_view op_name(MapKind kind);
// "exp", "scale(0.125)": the graph-file spelling, constants in the shortest form that reads back exactly.
std::string map_spelling(const MapOp& map);

std::optional<JoinOp> parse_join_op(std::string_view name);
std::optional<AggOp> parse_agg_op(std::string_view name);
std::optional<MapKind> parse_map_kind(std::string_view name);
// "mul, add, ...": for error messages.
std::string join_op_names();
std::string agg_op_names();
std::string map_names();

// The scalar semantics, usable in device code.
template <class S>
KOKKOS_INLINE_FUNCTION S apply_join(JoinOp op, S x, S y) {
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
      return x < y ? y : x;
    case JoinOp::min:
      return y < x ? y : x;
    case JoinOp::sqdiff:
      return (x - y) * (x - y);
    case JoinOp::absdiff:
      return x < y ? y - x : x - y;
    case JoinOp::eq:
      return x == y ? S(1) : S(0);
    case JoinOp::first:
      return x;
  }
  return x;
}

template <class S>
KOKKOS_INLINE_FUNCTION S apply_agg(AggOp op, S acc, S v) {
  switch (op) {
    case AggOp::sum:
      return acc + v;
    case AggOp::max:
      return acc < v ? v : acc;
    case AggOp::min:
      return v < acc ? v : acc;
    case AggOp::prod:
      return acc * v;
  }
  return acc;
}

template <class S>
KOKKOS_INLINE_FUNCTION S apply_map(const MapOp& map, S x) {
  const S c = static_cast<S>(map.constant);
  switch (map.kind) {
    case MapKind::identity:
      return x;
    case MapKind::exp:
      return compat::exp(x);
    case MapKind::log:
      return compat::log(x);
    case MapKind::neg:
      return -x;
    case MapKind::abs:
      return x < S(0) ? -x : x;
    case MapKind::relu:
      return x < S(0) ? S(0) : x;
    case MapKind::square:
      return x * x;
    case MapKind::sqrt:
      return compat::sqrt(x);
    case MapKind::tanh:
      return compat::tanh(x);
    case MapKind::sigmoid:
      return S(1) / (S(1) + compat::exp(-x));
    case MapKind::scale:
      return c * x;
    case MapKind::shift:
      return x + c;
    case MapKind::pow:
      return compat::pow(x, c);
    case MapKind::sign:  // NaN stays NaN
      return x < S(0) ? S(-1) : (S(0) < x ? S(1) : (x == S(0) ? S(0) : x));
  }
  return x;
}

// Calls f(std::integral_constant<MapKind, kind>{}): code that applies the map in a loop switches once,
// outside it, and apply_map(MapOp{K::value, c}, x) inside folds to the one formula.
EINREL_DISPATCH_ANY_SPACE
template <class F>
KOKKOS_INLINE_FUNCTION void with_constant(MapKind kind, F&& f) {
  using K = MapKind;
  switch (kind) {
    case K::identity:
      return f(std::integral_constant<K, K::identity>{});
    case K::exp:
      return f(std::integral_constant<K, K::exp>{});
    case K::log:
      return f(std::integral_constant<K, K::log>{});
    case K::neg:
      return f(std::integral_constant<K, K::neg>{});
    case K::abs:
      return f(std::integral_constant<K, K::abs>{});
    case K::relu:
      return f(std::integral_constant<K, K::relu>{});
    case K::square:
      return f(std::integral_constant<K, K::square>{});
    case K::sqrt:
      return f(std::integral_constant<K, K::sqrt>{});
    case K::tanh:
      return f(std::integral_constant<K, K::tanh>{});
    case K::sigmoid:
      return f(std::integral_constant<K, K::sigmoid>{});
    case K::scale:
      return f(std::integral_constant<K, K::scale>{});
    case K::shift:
      return f(std::integral_constant<K, K::shift>{});
    case K::pow:
      return f(std::integral_constant<K, K::pow>{});
    case K::sign:
      return f(std::integral_constant<K, K::sign>{});
  }
}

// The same for a join: f(std::integral_constant<JoinOp, op>{}).
EINREL_DISPATCH_ANY_SPACE
template <class F>
KOKKOS_INLINE_FUNCTION void with_constant(JoinOp op, F&& f) {
  using J = JoinOp;
  switch (op) {
    case J::mul:
      return f(std::integral_constant<J, J::mul>{});
    case J::add:
      return f(std::integral_constant<J, J::add>{});
    case J::sub:
      return f(std::integral_constant<J, J::sub>{});
    case J::div:
      return f(std::integral_constant<J, J::div>{});
    case J::max:
      return f(std::integral_constant<J, J::max>{});
    case J::min:
      return f(std::integral_constant<J, J::min>{});
    case J::sqdiff:
      return f(std::integral_constant<J, J::sqdiff>{});
    case J::absdiff:
      return f(std::integral_constant<J, J::absdiff>{});
    case J::eq:
      return f(std::integral_constant<J, J::eq>{});
    case J::first:
      return f(std::integral_constant<J, J::first>{});
  }
}

// And for an aggregation: f(std::integral_constant<AggOp, op>{}).
EINREL_DISPATCH_ANY_SPACE
template <class F>
KOKKOS_INLINE_FUNCTION void with_constant(AggOp op, F&& f) {
  using A = AggOp;
  switch (op) {
    case A::sum:
      return f(std::integral_constant<A, A::sum>{});
    case A::max:
      return f(std::integral_constant<A, A::max>{});
    case A::min:
      return f(std::integral_constant<A, A::min>{});
    case A::prod:
      return f(std::integral_constant<A, A::prod>{});
  }
}

}  // namespace einrel

#endif
