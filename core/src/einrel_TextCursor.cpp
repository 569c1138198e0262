#include <einrel_Error.hpp>
#include <einrel_TextCursor.hpp>

#include <cctype>

namespace einrel {

bool is_axis_name(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

TextCursor::TextCursor(std::string text, std::string what) : text_(std::move(text)), what_(std::move(what)) {}

void TextCursor::skip_spaces() {
  while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
}

bool TextCursor::at_end() {
  skip_spaces();
  return pos_ >= text_.size();
}

char TextCursor::peek() { return at_end() ? '\0' : text_[pos_]; }

bool TextCursor::accept(char c) {
  if (at_end() || text_[pos_] != c) return false;
  ++pos_;
  return true;
}

void TextCursor::expect(char c, const std::string& context) {
  if (!accept(c)) fail(quoted(c) + " " + context);
}

Extent TextCursor::integer(const std::string& expected) {
  if (at_end() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) fail(expected);
  const std::size_t start = pos_;
  Extent v = 0;
  while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
    if (pos_ - start >= 18) fail_at(start, "number too large (at most 18 digits)");
    v = v * 10 + (text_[pos_++] - '0');
  }
  return v;
}

std::string TextCursor::axis_name(const std::string& expected) {
  if (at_end() || !(std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) fail(expected);
  const std::size_t start = pos_;
  while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
  return text_.substr(start, pos_ - start);
}

void TextCursor::expect_end() {
  if (!at_end()) fail("end of text");
}

std::string TextCursor::found() { return at_end() ? "end of text" : quoted(text_[pos_]); }

void TextCursor::fail(const std::string& expected) {
  const std::string f = found();
  fail_at(pos_, "expected " + expected + ", found " + f);
}

void TextCursor::fail_at(std::size_t position, const std::string& message) const {
  throw ParseError({what_, 1, static_cast<int>(position) + 1}, message);
}

}  // namespace einrel
