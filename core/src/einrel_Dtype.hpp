#ifndef EINREL_DTYPE_HPP
#define EINREL_DTYPE_HPP

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace einrel {

// Element type of a tensor: the graph file's f32 / f64.
enum class Dtype { f32, f64 };

constexpr std::string_view dtype_name(Dtype t) { return t == Dtype::f32 ? "f32" : "f64"; }
constexpr std::size_t dtype_bytes(Dtype t) { return t == Dtype::f32 ? 4 : 8; }

constexpr std::optional<Dtype> parse_dtype(std::string_view s) {
  if (s == "f32") return Dtype::f32;
  if (s == "f64") return Dtype::f64;
  return std::nullopt;
}

template <class Scalar>
constexpr Dtype dtype_of() {
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                "einrel tensors hold float (f32) or double (f64)");
  return std::is_same_v<Scalar, float> ? Dtype::f32 : Dtype::f64;
}

// Calls f(Scalar{}) with the C++ type of t: the one place where a runtime dtype becomes a template argument.
template <class F>
decltype(auto) dispatch_dtype(Dtype t, F&& f) {
  if (t == Dtype::f32) return f(float{});
  return f(double{});
}

}  // namespace einrel

#endif
