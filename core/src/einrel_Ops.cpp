#include <einrel_Ops.hpp>

#include <array>
#include <charconv>
#include <utility>

namespace einrel {
namespace {

constexpr std::array<std::pair<JoinOp, std::string_view>, 10> join_names{{{JoinOp::mul, "mul"},
                                                                          {JoinOp::add, "add"},
                                                                          {JoinOp::sub, "sub"},
                                                                          {JoinOp::div, "div"},
                                                                          {JoinOp::max, "max"},
                                                                          {JoinOp::min, "min"},
                                                                          {JoinOp::sqdiff, "sqdiff"},
                                                                          {JoinOp::absdiff, "absdiff"},
                                                                          {JoinOp::eq, "eq"},
                                                                          {JoinOp::first, "first"}}};
constexpr std::array<std::pair<AggOp, std::string_view>, 4> agg_names{
    {{AggOp::sum, "sum"}, {AggOp::max, "max"}, {AggOp::min, "min"}, {AggOp::prod, "prod"}}};
constexpr std::array<std::pair<MapKind, std::string_view>, 14> map_kind_names{{{MapKind::identity, "identity"},
                                                                               {MapKind::exp, "exp"},
                                                                               {MapKind::log, "log"},
                                                                               {MapKind::neg, "neg"},
                                                                               {MapKind::abs, "abs"},
                                                                               {MapKind::relu, "relu"},
                                                                               {MapKind::square, "square"},
                                                                               {MapKind::sqrt, "sqrt"},
                                                                               {MapKind::tanh, "tanh"},
                                                                               {MapKind::sigmoid, "sigmoid"},
                                                                               {MapKind::scale, "scale"},
                                                                               {MapKind::shift, "shift"},
                                                                               {MapKind::pow, "pow"},
                                                                               {MapKind::sign, "sign"}}};

template <class Op, std::size_t N>
std::string_view name_of(const std::array<std::pair<Op, std::string_view>, N>& table, Op op) {
  for (const auto& [o, n] : table)
    if (o == op) return n;
  return "?";
}

template <class Op, std::size_t N>
std::optional<Op> lookup(const std::array<std::pair<Op, std::string_view>, N>& table, std::string_view name) {
  for (const auto& [o, n] : table)
    if (n == name) return o;
  return std::nullopt;
}

template <class Op, std::size_t N>
std::string list(const std::array<std::pair<Op, std::string_view>, N>& table) {
  std::string s;
  for (const auto& [o, n] : table) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

JoinOp combining_join(AggOp op) {
  switch (op) {
    case AggOp::sum:
      return JoinOp::add;
    case AggOp::max:
      return JoinOp::max;
    case AggOp::min:
      return JoinOp::min;
    case AggOp::prod:
      return JoinOp::mul;
  }
  return JoinOp::add;
}

std::string_view op_name(JoinOp op) { return name_of(join_names, op); }
std::string_view op_name(AggOp op) { return name_of(agg_names, op); }
std::string_view op_name(MapKind kind) { return name_of(map_kind_names, kind); }

std::string map_spelling(const MapOp& map) {
  std::string s(op_name(map.kind));
  if (!MapOp::takes_constant(map.kind)) return s;
  std::array<char, 32> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), map.constant);  // shortest round-trip form
  return s + "(" + std::string(buf.data(), res.ptr) + ")";
}

std::optional<JoinOp> parse_join_op(std::string_view name) { return lookup(join_names, name); }
std::optional<AggOp> parse_agg_op(std::string_view name) { return lookup(agg_names, name); }
std::optional<MapKind> parse_map_kind(std::string_view name) { return lookup(map_kind_names, name); }
std::string join_op_names() { return list(join_names); }
std::string agg_op_names() { return list(agg_names); }
std::string map_names() { return list(map_kind_names); }

}  // namespace einrel
