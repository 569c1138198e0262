#ifndef EINREL_JSON_HPP
#define EINREL_JSON_HPP

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// The one JSON writer of everything einrel prints or saves as JSON: plan, run, reshard and train reports
// (docs/cli.md lists their fields).
namespace einrel::io {

// The version of every JSON report einrel writes, bumped when a field changes meaning or is removed.
// 2: the run report's `ranks` became the per-rank list (the count is `num_ranks`), and the plan may carry
// the dry run's `ranks`.
constexpr int json_schema_version = 2;

// `s` as a JSON string: quoted, with '"', '\\' and the control characters escaped (UTF-8 passes through).
std::string json_string(std::string_view s);

// The shortest decimal that reads back as the same double (up to 17 significant digits); NaN and ±Inf,
// which JSON cannot hold, as null.
std::string json_number(double x);

// The members of a JSON object whose values are all numbers (a machine file, docs/planner.md), by name.
// Throws Error naming `where` and the offset for anything else: another value type, a repeated name,
// text after the object.
std::map<std::string, double> read_json_numbers(std::string_view text, const std::string& where);

// A JSON document written value by value. Members of the outermost object go on lines of their own, and so
// do objects listed in its arrays; everything deeper stays on one line, which keeps reports both valid and
// readable. Misuse (a member without a key, a value after the document ends, closing what is not open) is
// a programming error and throws std::logic_error.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double x);
  template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  JsonWriter& value(Int n) {
    return scalar(std::to_string(n));
  }
  template <class T>
  JsonWriter& value(const std::optional<T>& x) {
    return x ? value(*x) : null();
  }
  template <class T>
  JsonWriter& value(const std::vector<T>& xs) {
    begin_array();
    for (const T& x : xs) value(x);
    return end_array();
  }
  JsonWriter& null();

  // key(name) then value(x).
  template <class T>
  JsonWriter& member(std::string_view name, const T& x) {
    key(name);
    return value(x);
  }

  // The finished document, ending in a newline; throws std::logic_error while a container is open.
  std::string str() const;

 private:
  struct Level {
    bool object;
    bool empty = true;
    bool broken = false;  // some member went on a line of its own: so does the closing bracket
  };
  JsonWriter& scalar(const std::string& text);
  void before_value(bool container);
  JsonWriter& open(bool object, char bracket);
  JsonWriter& close(bool object, char bracket);
  void new_line(std::size_t depth);

  std::string out_;
  std::vector<Level> open_;
  bool key_written_ = false;
  bool finished_ = false;
};

// A report: the outermost object opened, its first member `schema_version`.
JsonWriter json_report();

}  // namespace einrel::io

#endif
