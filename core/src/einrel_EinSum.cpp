#include <einrel_EinSum.hpp>
#include <einrel_Error.hpp>

#include <array>

namespace einrel {
namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Reads the labels of one operand or of the output, from `pos` up to a ',' or "->" or the end.
std::string read_labels(std::string_view eq, std::size_t& pos, const std::string& what) {
  std::string labels;
  for (; pos < eq.size(); ++pos) {
    const char c = eq[pos];
    if (c == ' ') continue;
    if (c == ',' || (c == '-' && pos + 1 < eq.size() && eq[pos + 1] == '>')) break;
    if (c == '.') throw EquationError(pos, "ellipsis '...' in " + what + " is not supported yet; write every label");
    if (!is_label(c))
      throw EquationError(pos, "invalid character " + quoted(c) + " in " + what + "; labels are letters a-z, A-Z");
    if (labels.find(c) != std::string::npos)
      throw EquationError(pos, "label " + quoted(c) + " repeats in " + what + " '" + labels + c +
                                   "...': repeated labels within one operand (diagonals) are not supported yet");
    labels += c;
  }
  return labels;
}

}  // namespace

EinSum EinSum::parse(std::string_view eq, std::size_t num_operands) {
  if (num_operands < 1) throw EquationError(0, "an einsum needs at least one operand");
  EinSum e;
  std::size_t pos = 0;
  while (true) {
    e.inputs.push_back(read_labels(eq, pos, "operand " + std::to_string(e.inputs.size() + 1)));
    if (pos < eq.size() && eq[pos] == ',') {
      ++pos;
      continue;
    }
    break;
  }
  if (e.inputs.size() != num_operands)
    throw EquationError(0, "equation has " + std::to_string(e.inputs.size()) + " operand(s) but " +
                               std::to_string(num_operands) + " tensor(s) are given");

  std::array<int, 128> count{};
  for (const auto& in : e.inputs)
    for (char c : in) ++count[static_cast<unsigned char>(c)];

  if (pos < eq.size()) {  // explicit "->output"
    pos += 2;
    const std::size_t out_start = pos;
    e.output = read_labels(eq, pos, "the output");
    if (pos < eq.size()) throw EquationError(pos, "unexpected " + quoted(eq[pos]) + " after the output labels");
    for (std::size_t i = 0; i < e.output.size(); ++i) {
      const char c = e.output[i];
      if (count[static_cast<unsigned char>(c)] == 0) {
        std::size_t at = eq.find(c, out_start);
        throw EquationError(at, "output label " + quoted(c) + " does not appear in any operand");
      }
    }
  } else {  // implicit: labels occurring once, in ASCII order (numpy)
    for (int c = 0; c < 128; ++c)
      if (count[c] == 1) e.output += static_cast<char>(c);
  }
  return e;
}

std::string EinSum::equation() const {
  std::string s;
  for (std::size_t i = 0; i < inputs.size(); ++i) s += (i ? "," : "") + inputs[i];
  return s + "->" + output;
}

std::string EinSum::unique_labels() const {
  std::string u;
  for (const auto& in : inputs)
    for (char c : in)
      if (u.find(c) == std::string::npos) u += c;
  return u;
}

std::string EinSum::aggregated_labels() const {
  std::string a;
  for (char c : unique_labels())
    if (output.find(c) == std::string::npos) a += c;
  return a;
}

}  // namespace einrel
