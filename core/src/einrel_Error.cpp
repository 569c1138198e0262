#include <einrel_Error.hpp>

#include <cstdio>

namespace einrel {

std::string quoted(std::string_view text) {
  std::string s = "'";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      s += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
      s += escaped;
    }
  }
  return s + "'";
}

std::string quoted(char c) { return quoted(std::string_view(&c, 1)); }

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<graph>") : file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s;
}

ParseError::ParseError(const SourceLocation& where, const std::string& what)
    : Error(where.str() + ": " + what), where_(where) {}

}  // namespace einrel
