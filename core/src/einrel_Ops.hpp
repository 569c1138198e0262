#ifndef EINREL_OPS_HPP
#define EINREL_OPS_HPP

#include <optional>
#include <string>
#include <string_view>

namespace einrel {

// The scalar functions of an EinSum (eindecomp.txt §3, docs/architecture.md): the join ⊗ applied to each
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

  // Short spellings for the builder API: EinsumOptions::map = MapOp::abs(), MapOp::scale(0.125).
  static constexpr MapOp identity() { return {MapKind::identity, 0.0}; }
  static constexpr MapOp exp() { return {MapKind::exp, 0.0}; }
  static constexpr MapOp log() { return {MapKind::log, 0.0}; }
  static constexpr MapOp neg() { return {MapKind::neg, 0.0}; }
  static constexpr MapOp abs() { return {MapKind::abs, 0.0}; }
  static constexpr MapOp relu() { return {MapKind::relu, 0.0}; }
  static constexpr MapOp square() { return {MapKind::square, 0.0}; }
  static constexpr MapOp sqrt() { return {MapKind::sqrt, 0.0}; }
  static constexpr MapOp tanh() { return {MapKind::tanh, 0.0}; }
  static constexpr MapOp sigmoid() { return {MapKind::sigmoid, 0.0}; }
  static constexpr MapOp sign() { return {MapKind::sign, 0.0}; }
  static constexpr MapOp scale(double c) { return {MapKind::scale, c}; }  // c * x
  static constexpr MapOp shift(double c) { return {MapKind::shift, c}; }  // x + c
  static constexpr MapOp pow(double c) { return {MapKind::pow, c}; }      // x ^ c

  static constexpr bool takes_constant(MapKind k) {
    return k == MapKind::scale || k == MapKind::shift || k == MapKind::pow;
  }
  friend bool operator==(const MapOp& a, const MapOp& b) { return a.kind == b.kind && a.constant == b.constant; }
  friend bool operator!=(const MapOp& a, const MapOp& b) { return !(a == b); }
};

// The join that combines two partial results of aggregation ⊕ into one (a ⊕ b): add for sum, max, min, mul for
// prod.
JoinOp combining_join(AggOp op);

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

// What the ops compute (apply_join, apply_agg, apply_map, with_constant; host and device code):
// einrel_OpSemantics.hpp in einrel::tensor. This header stays free of Kokkos for the planner.

}  // namespace einrel

#endif
