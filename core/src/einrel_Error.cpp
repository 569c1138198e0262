#include <einrel_Error.hpp>

namespace einrel {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<graph>") : file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s;
}

ParseError::ParseError(const SourceLocation& where, const std::string& what)
    : Error(where.str() + ": " + what), where_(where) {}

}  // namespace einrel
