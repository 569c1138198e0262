#ifndef EINREL_TENSOR_HPP
#define EINREL_TENSOR_HPP

#include <einrel_BlockPool.hpp>
#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_Error.hpp>
#include <einrel_KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace einrel {

// A dense tensor of rank 0..max_rank in C (row-major) order, stored in one Kokkos view in MemorySpace.
// Tensors einrel allocates draw their memory from the BlockPool of MemorySpace (the view is a subview of a
// pooled buffer; label() is the tensor's own). Copies share the data, like Kokkos views.
template <class Scalar, class MemorySpace>
class Tensor {
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                "einrel::Tensor holds float (f32) or double (f64)");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "einrel::Tensor needs a Kokkos memory space");

 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;
  using view_type = Kokkos::View<Scalar*, MemorySpace>;

  Tensor() = default;

  // A zero-filled tensor from the pool; `label` names it (and a fresh allocation in Kokkos tools).
  Tensor(const std::string& label, const Bound& bound) : Tensor(uninitialized(label, bound)) {
    Kokkos::deep_copy(data_, Scalar(0));
  }

  // A tensor from the pool whose elements are left unset, for results that overwrite every element.
  static Tensor uninitialized(const std::string& label, const Bound& bound) {
    check_bound(bound, "tensor '" + label + "'");
    return Tensor(bound,
                  BlockPool<MemorySpace>::instance().template acquire<Scalar>(
                      label, static_cast<std::size_t>(num_elements(bound))),
                  label);
  }

  // Wraps an existing view holding the elements of `bound` in C order; label() is the view's.
  Tensor(const Bound& bound, const view_type& data) : Tensor(bound, data, std::string()) {}

  const Bound& bound() const { return bound_; }
  int rank() const { return static_cast<int>(bound_.size()); }
  Extent size() const { return static_cast<Extent>(data_.extent(0)); }
  const view_type& view() const { return data_; }
  // The name given at allocation, or the wrapped view's label (read from device memory where the view
  // lives there: for messages, not for a hot path).
  std::string label() const { return label_.empty() ? data_.label() : label_; }
  static constexpr Dtype dtype() { return dtype_of<Scalar>(); }

 private:
  // Reads the view's label only for an error: Kokkos 3.4 keeps a device allocation's label in device
  // memory, and reading it is a blocking cudaMemcpy that waits for every kernel queued before it (two
  // such reads per packed operand made a packing contraction on an H100 wait for the device each call).
  Tensor(const Bound& bound, const view_type& data, std::string label)
      : bound_(bound), data_(data), label_(std::move(label)) {
    if (const auto problem = bound_problem(bound)) throw Error("tensor '" + this->label() + "'" + *problem);
    if (static_cast<Extent>(data.extent(0)) != num_elements(bound))
      throw Error("view '" + this->label() + "' has " + std::to_string(data.extent(0)) + " elements, bound " +
                  to_string(bound) + " needs " + std::to_string(num_elements(bound)));
  }

  Bound bound_;
  view_type data_;
  std::string label_;
};

// A tensor whose dtype is known at run time only.
template <class MemorySpace>
using AnyTensor = std::variant<Tensor<float, MemorySpace>, Tensor<double, MemorySpace>>;

// Element strides of a C-order tensor with this bound (the last dimension has stride 1).
inline std::vector<Extent> c_order_strides(const Bound& b) {
  std::vector<Extent> s(b.size(), 1);
  for (int d = static_cast<int>(b.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * b[d + 1];
  return s;
}

// Copies host data (C order) into a new tensor in MemorySpace.
template <class MemorySpace, class Scalar>
Tensor<Scalar, MemorySpace> tensor_from_host(const std::string& label, const Bound& bound,
                                             const std::vector<Scalar>& values) {
  Tensor<Scalar, MemorySpace> t(label, bound);
  if (static_cast<Extent>(values.size()) != t.size())
    throw Error("tensor '" + label + "' with bound " + to_string(bound) + " needs " + std::to_string(t.size()) +
                " values, got " + std::to_string(values.size()));
  auto host = compat::create_host_mirror_uninitialized(t.view());
  for (std::size_t i = 0; i < values.size(); ++i) host(i) = values[i];
  Kokkos::deep_copy(t.view(), host);
  return t;
}

// Copies a tensor's elements (C order) to the host.
template <class Scalar, class MemorySpace>
std::vector<Scalar> tensor_to_host(const Tensor<Scalar, MemorySpace>& t) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t.view());
  return std::vector<Scalar>(host.data(), host.data() + host.extent(0));
}

}  // namespace einrel

#endif
