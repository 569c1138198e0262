#include <einrel_Error.hpp>
#include <einrel_Json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace einrel::io {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

void JsonWriter::new_line(std::size_t depth) {
  out_ += '\n';
  out_.append(2 * depth, ' ');
}

// Writes what goes before a value in the innermost container: the comma, and the line break of the
// outermost object's members and of containers listed in its arrays.
void JsonWriter::before_value(bool container) {
  if (finished_) throw std::logic_error("JSON: a value after the end of the document");
  if (open_.empty()) return;
  Level& level = open_.back();
  if (level.object) {
    if (!key_written_) throw std::logic_error("JSON: an object member without a key");
    key_written_ = false;
    return;
  }
  if (!level.empty) out_ += ',';
  if (open_.size() == 2 && container) {
    new_line(open_.size());
    level.broken = true;
  } else if (!level.empty) {
    out_ += ' ';
  }
  level.empty = false;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (open_.empty() || !open_.back().object || key_written_)
    throw std::logic_error("JSON: key '" + std::string(name) + "' outside an object");
  Level& level = open_.back();
  if (!level.empty) out_ += ',';
  if (open_.size() == 1) {
    new_line(1);
    level.broken = true;
  } else if (!level.empty) {
    out_ += ' ';
  }
  level.empty = false;
  out_ += json_string(name) + ": ";
  key_written_ = true;
  return *this;
}

JsonWriter& JsonWriter::scalar(const std::string& text) {
  before_value(false);
  out_ += text;
  if (open_.empty()) finished_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) { return scalar(json_string(s)); }
JsonWriter& JsonWriter::value(bool b) { return scalar(b ? "true" : "false"); }
JsonWriter& JsonWriter::value(double x) { return scalar(json_number(x)); }
JsonWriter& JsonWriter::null() { return scalar("null"); }

JsonWriter& JsonWriter::open(bool object, char bracket) {
  before_value(true);
  out_ += bracket;
  open_.push_back({object});
  return *this;
}

JsonWriter& JsonWriter::close(bool object, char bracket) {
  if (open_.empty() || open_.back().object != object || key_written_)
    throw std::logic_error(std::string("JSON: '") + bracket + "' closes nothing open");
  const bool broken = open_.back().broken;
  open_.pop_back();
  if (broken) new_line(open_.size());
  out_ += bracket;
  if (open_.empty()) finished_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() { return open(true, '{'); }
JsonWriter& JsonWriter::end_object() { return close(true, '}'); }
JsonWriter& JsonWriter::begin_array() { return open(false, '['); }
JsonWriter& JsonWriter::end_array() { return close(false, ']'); }

std::string JsonWriter::str() const {
  if (!finished_) throw std::logic_error("JSON: the document is unfinished");
  return out_ + "\n";
}

JsonWriter json_report() {
  JsonWriter j;
  j.begin_object().member("schema_version", json_schema_version);
  return j;
}

namespace {

// A cursor over the text of a flat JSON object of numbers, with errors naming where it stands.
class NumberObjectReader {
 public:
  NumberObjectReader(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  std::map<std::string, double> read() {
    std::map<std::string, double> members;
    expect('{');
    if (peek() == '}') {
      ++at_;
    } else {
      for (;;) {
        const std::string name = string();
        expect(':');
        if (!members.emplace(name, number()).second) fail("'" + name + "' appears twice");
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        break;
      }
    }
    if (peek() != '\0') fail("text after the object");
    return members;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ": at byte " + std::to_string(at_) + ": " + what +
                " (a machine file is one JSON object of numbers)");
  }
  char peek() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  std::string string() {
    expect('"');
    const std::size_t end = text_.find('"', at_);
    if (end == std::string_view::npos) fail("unterminated name");
    std::string name(text_.substr(at_, end - at_));
    if (name.find('\\') != std::string::npos) fail("escapes in names are not supported");
    at_ = end + 1;
    return name;
  }
  double number() {
    peek();
    const std::string rest(text_.substr(at_, std::min<std::size_t>(64, text_.size() - at_)));
    char* end = nullptr;
    const double x = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str() || !std::isfinite(x)) fail("expected a number");
    at_ += static_cast<std::size_t>(end - rest.c_str());
    return x;
  }

  std::string_view text_;
  const std::string& where_;
  std::size_t at_ = 0;
};

}  // namespace

std::map<std::string, double> read_json_numbers(std::string_view text, const std::string& where) {
  return NumberObjectReader(text, where).read();
}

}  // namespace einrel::io
