#ifndef EINREL_OPSEMANTICS_HPP
#define EINREL_OPSEMANTICS_HPP

// What the ops of einrel_Ops.hpp compute, in host and device code: the op names stay in pure core (the
// planner and the graph language need no Kokkos), their scalar formulas live with the containers.

#include <einrel_KokkosCompat.hpp>
#include <einrel_Ops.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace einrel {

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
