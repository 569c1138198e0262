#ifndef EINREL_ERROR_HPP
#define EINREL_ERROR_HPP

#include <stdexcept>
#include <string>

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

// An error in a graph file: the message starts with file:line:col.
class ParseError : public Error {
 public:
  ParseError(const SourceLocation& where, const std::string& what);
  const SourceLocation& where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

}  // namespace einrel

#endif
