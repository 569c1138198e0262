#ifndef EINREL_TEXTCURSOR_HPP
#define EINREL_TEXTCURSOR_HPP

#include <einrel_Bound.hpp>

#include <cstddef>
#include <string>

namespace einrel {

// Reads a one-line argument (a mesh "x=4,y=6", a distributed type "[3{x}12,12]") character by character,
// skipping spaces between tokens. Errors are ParseErrors at `what`:1:column ("--from:1:7: expected ',' or
// ']', found 'x'"); the character found is quoted, escaped when it is not printable ('\x1c', einrel::quoted).
class TextCursor {
 public:
  TextCursor(std::string text, std::string what);

  std::size_t position() {  // 0-based, after skipped spaces: where the next token starts
    skip_spaces();
    return pos_;
  }
  bool at_end();
  char peek();
  bool accept(char c);
  void expect(char c, const std::string& context);
  Extent integer(const std::string& expected);  // digits, at most 18
  // Letters, digits and '_', starting with a letter or '_'.
  std::string axis_name(const std::string& expected);
  void expect_end();
  [[noreturn]] void fail(const std::string& expected);  // "expected …, found …" at the current position
  [[noreturn]] void fail_at(std::size_t position, const std::string& message) const;

 private:
  void skip_spaces();
  std::string found();

  std::string text_, what_;
  std::size_t pos_ = 0;
};

// Whether `name` is letters, digits, '_' and '.', starting with a letter or '_' (axis names; '.' only in
// the prime factors of an axis, "x.0").
bool is_axis_name(const std::string& name);

}  // namespace einrel

#endif
