#ifndef EINREL_EINSUM_HPP
#define EINREL_EINSUM_HPP

#include <einrel_Error.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace einrel {

// Join op ⊗ applied to each matching pair of elements, and aggregation op ⊕ over the labels that are
// not in the output (eindecomp.txt §3). A contraction is (mul, sum).
enum class JoinOp { mul };
enum class AggOp { sum };

// An error inside an equation string; position() is the 0-based offset of the offending character.
class EquationError : public PositionedError {
 public:
  using PositionedError::PositionedError;
};

// A unary or binary EinSum: Z[output] <- ⊕ ⊗(X[inputs[0]], Y[inputs[1]]). Labels are single letters,
// one per dimension, stored as strings ("ij" is a matrix indexed by i then j).
struct EinSum {
  std::vector<std::string> inputs;
  std::string output;
  JoinOp join = JoinOp::mul;
  AggOp agg = AggOp::sum;

  // Parses a numpy-style equation for `num_operands` tensors: explicit "ij,jk->ik" or implicit "ij,jk"
  // (output = labels that occur exactly once, in ASCII order). Spaces are ignored. Throws EquationError.
  static EinSum parse(std::string_view equation, std::size_t num_operands);

  std::size_t arity() const { return inputs.size(); }
  // The explicit equation, e.g. "ij,jk->ik".
  std::string equation() const;
  // Every label once, in order of first appearance over the inputs.
  std::string unique_labels() const;
  // Labels of the inputs that are not in the output, in order of first appearance.
  std::string aggregated_labels() const;
};

}  // namespace einrel

#endif
