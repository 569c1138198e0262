#ifndef EINREL_ERROR_HPP
#define EINREL_ERROR_HPP

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace einrel {

// Every failure einrel reports is an Error whose message names the problem; the CLI prints it on one line.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a graph statement or token comes from; line and column are 1-based, 0 when unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string str() const;
};

// `text` (or one character) in single quotes for an error message, bytes outside printable ASCII written
// as \xNN: whatever the input held, the message stays on one line (a raw 0x1c or newline would split it).
std::string quoted(std::string_view text);
std::string quoted(char c);

// An error in a graph file: the message starts with file:line:col.
class ParseError : public Error {
 public:
  ParseError(const SourceLocation& where, const std::string& what);
  const SourceLocation& where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

// An Error about one position inside something its catcher knows better (a character of an equation,
// an operand of an einsum), so the catcher can report it at its own source location.
class PositionedError : public Error {
 public:
  PositionedError(std::size_t position, const std::string& what) : Error(what), position_(position) {}
  std::size_t position() const noexcept { return position_; }

 private:
  std::size_t position_;
};

}  // namespace einrel

#endif
