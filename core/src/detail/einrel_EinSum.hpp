#ifndef EINREL_EINSUM_HPP
#define EINREL_EINSUM_HPP

#include <einrel_Error.hpp>
#include <einrel_Ops.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace einrel {

// An error inside an equation string; position() is the 0-based offset of the offending character.
class EquationError : public PositionedError {
 public:
  using PositionedError::PositionedError;
};

// An EinSum (eindecomp.txt §3, equation 2): Z[output] <- ⊕ f(⊗(X[inputs[0]], Y[inputs[1]])) for two
// operands, Z[output] <- ⊕ f(X[inputs[0]]) for one. Labels are single letters, one per dimension, stored
// as strings ("ij" is a matrix indexed by i then j). A graph vertex has one or two operands; an EinSum
// with more is an n-ary expression that the graph decomposes into binary vertices.
struct EinSum {
  std::vector<std::string> inputs;
  std::string output;
  JoinOp join = JoinOp::mul;
  AggOp agg = AggOp::sum;
  MapOp map;

  // Parses a numpy-style equation for `num_operands` (>= 1) tensors: explicit "ij,jk->ik" or implicit
  // "ij,jk" (output = labels that occur exactly once, in ASCII order). Spaces are ignored. Throws
  // EquationError.
  static EinSum parse(std::string_view equation, std::size_t num_operands);

  std::size_t arity() const { return inputs.size(); }
  // The explicit equation, e.g. "ij,jk->ik".
  std::string equation() const;
  // Every label once, in order of first appearance over the inputs.
  std::string unique_labels() const;
  // Labels of the inputs that are not in the output, in order of first appearance.
  std::string aggregated_labels() const;
  // (mul, sum, identity): an Einstein summation in the classic sense.
  bool is_contraction() const { return join == JoinOp::mul && agg == AggOp::sum && map.kind == MapKind::identity; }

  friend bool operator==(const EinSum& a, const EinSum& b) {
    return a.inputs == b.inputs && a.output == b.output && a.join == b.join && a.agg == b.agg && a.map == b.map;
  }
};

}  // namespace einrel

#endif
