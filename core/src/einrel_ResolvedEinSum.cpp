#include <einrel_ResolvedEinSum.hpp>

namespace einrel {

ResolvedEinSum resolve(const EinSum& e, const std::vector<Bound>& operand_bounds,
                       const std::vector<std::string>& operand_names) {
  if (operand_bounds.size() != e.arity())
    throw Error("einsum '" + e.equation() + "' takes " + std::to_string(e.arity()) + " operand(s), got " +
                std::to_string(operand_bounds.size()));
  auto name = [&](std::size_t k) {
    return k < operand_names.size() ? operand_names[k] : "operand " + std::to_string(k + 1);
  };
  ResolvedEinSum r;
  r.einsum_ = e;
  r.operand_bounds_ = operand_bounds;
  // Every label has one extent across all operands (eindecomp.txt §3: the bound of a label).
  std::vector<std::size_t> seen_in;  // per unique label: the operand that gave its extent
  for (std::size_t k = 0; k < e.arity(); ++k) {
    const std::string& labels = e.inputs[k];
    const Bound& bound = operand_bounds[k];
    if (bound.size() != labels.size())
      throw OperandError(k, "'" + name(k) + "' has rank " + std::to_string(bound.size()) + " " + to_string(bound) +
                                " but the equation gives it " + std::to_string(labels.size()) + " label(s) '" + labels +
                                "'");
    for (std::size_t d = 0; d < labels.size(); ++d) {
      const char c = labels[d];
      const int at = r.index_of(c);
      if (at < 0) {
        if (static_cast<unsigned char>(c) >= r.index_.size())
          throw OperandError(k, "'" + name(k) + "' has a label that is not ASCII in '" + labels + "'");
        r.index_[static_cast<unsigned char>(c)] = static_cast<signed char>(r.unique_.size());
        r.unique_ += c;
        r.extents_.push_back(bound[d]);
        seen_in.push_back(k);
      } else if (r.extents_[at] != bound[d]) {
        throw OperandError(k, "shape mismatch for label '" + std::string(1, c) + "': it is " +
                                  std::to_string(r.extents_[at]) + " in '" + name(seen_in[at]) + "' but " +
                                  std::to_string(bound[d]) + " in '" + name(k) + "' (dimension " + std::to_string(d) +
                                  ")");
      }
    }
  }
  for (char c : e.output) {
    if (!r.has(c))
      throw Error("output label '" + std::string(1, c) + "' of einsum '" + e.equation() +
                  "' does not appear in any operand");
    r.output_bound_.push_back(r.extent(c));
  }
  for (char c : r.unique_)
    if (e.output.find(c) == std::string::npos) r.aggregated_ += c;
  return r;
}

std::size_t ResolvedEinSum::unique_index(char label) const {
  const int at = index_of(label);
  if (at < 0) throw Error("label '" + std::string(1, label) + "' is not in einsum '" + einsum_.equation() + "'");
  return static_cast<std::size_t>(at);
}

Bound ResolvedEinSum::extents(const std::string& labels) const {
  Bound b;
  b.reserve(labels.size());
  for (char c : labels) b.push_back(extent(c));
  return b;
}

std::vector<std::size_t> ResolvedEinSum::positions(const std::string& labels) const {
  std::vector<std::size_t> p;
  p.reserve(labels.size());
  for (char c : labels) p.push_back(unique_index(c));
  return p;
}

std::size_t ResolvedEinSum::position_in(std::size_t operand, char label) const {
  return einsum_.inputs.at(operand).find(label);
}

std::size_t ResolvedEinSum::position_in_output(char label) const { return einsum_.output.find(label); }

}  // namespace einrel
