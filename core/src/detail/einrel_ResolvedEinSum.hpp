#ifndef EINREL_RESOLVEDEINSUM_HPP
#define EINREL_RESOLVEDEINSUM_HPP

#include <einrel_Bound.hpp>
#include <einrel_EinSum.hpp>
#include <einrel_Error.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace einrel {

// An EinSum operand that does not fit its equation; position() is the operand's 0-based index.
class OperandError : public PositionedError {
 public:
  using PositionedError::PositionedError;
};

// An EinSum with its labels resolved against the bounds of its operands (eindecomp.txt §3: the bound of
// a label): every unique label's extent, its position in each operand and in the output, the aggregated
// labels and the output bound. The one place these are derived: a graph vertex keeps the one of its
// operands' bounds (Graph::resolved), the kernels resolve an EinSum against the bounds of the blocks
// they are given. A host-side value, built by resolve().
class ResolvedEinSum {
 public:
  // position_in() of a label the tensor does not carry.
  static constexpr std::size_t absent = std::string::npos;

  const EinSum& einsum() const { return einsum_; }
  std::size_t arity() const { return einsum_.arity(); }
  // Every label once, in order of first appearance over the inputs (EinSum::unique_labels()): the
  // order of partition vectors and of positions().
  const std::string& unique_labels() const { return unique_; }
  // Labels of the inputs that are not in the output, in order of first appearance.
  const std::string& aggregated_labels() const { return aggregated_; }
  const std::vector<Bound>& operand_bounds() const { return operand_bounds_; }
  const Bound& output_bound() const { return output_bound_; }

  bool has(char label) const { return index_of(label) >= 0; }
  // The extent of `label`; throws Error when the EinSum does not use it.
  Extent extent(char label) const { return extents_[unique_index(label)]; }
  // The extents of `labels` in their order: the bound of a tensor indexed by them.
  Bound extents(const std::string& labels) const;
  // The position of each of `labels` among unique_labels(); throws Error for a label the EinSum does
  // not use.
  std::vector<std::size_t> positions(const std::string& labels) const;
  // The dimension of operand `operand` (0-based) indexed by `label`, or `absent`.
  std::size_t position_in(std::size_t operand, char label) const;
  // The dimension of the output indexed by `label`, or `absent`.
  std::size_t position_in_output(char label) const;

 private:
  friend ResolvedEinSum resolve(const EinSum& e, const std::vector<Bound>& operand_bounds,
                                const std::vector<std::string>& operand_names);

  static constexpr std::array<signed char, 128> no_labels() {
    std::array<signed char, 128> a{};
    for (auto& i : a) i = -1;
    return a;
  }
  int index_of(char label) const {
    const auto c = static_cast<unsigned char>(label);
    return c < index_.size() ? index_[c] : -1;
  }
  std::size_t unique_index(char label) const;

  EinSum einsum_;
  std::vector<Bound> operand_bounds_;
  Bound output_bound_;
  std::string unique_, aggregated_;
  std::array<signed char, 128> index_ = no_labels();  // label -> position in unique_, -1 when unused
  std::vector<Extent> extents_;                       // per unique label
};

// Resolves `e` against the bounds of its operands (operand_bounds[k] for e.inputs[k]); `operand_names`
// name them in messages (default: "operand 1", "operand 2", ...). Throws OperandError, at the operand,
// when an operand's rank differs from its number of labels or a label has two extents, and Error when
// the number of bounds differs from the arity or an output label is in no operand.
ResolvedEinSum resolve(const EinSum& e, const std::vector<Bound>& operand_bounds,
                       const std::vector<std::string>& operand_names = {});

}  // namespace einrel

#endif
