// The one JSON writer: escaping, numbers that read back exactly, layout, and misuse refused.
#include <einrel_Json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace einrel::io;

TEST(Json, StringsAreQuotedAndEscaped) {
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(json_string(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_string(std::string("nul\0byte", 8)), "\"nul\\u0000byte\"");
  EXPECT_EQ(json_string("d\xc3\xa9j\xc3\xa0"), "\"d\xc3\xa9j\xc3\xa0\"");  // UTF-8 passes through
}

TEST(Json, NumbersReadBackExactly) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int k = 0; k < 10000; ++k) {
    const double x = std::ldexp(mantissa(gen), exponent(gen));
    const std::string text = json_number(x);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
  }
  EXPECT_EQ(json_number(0.1), "0.1");  // the shortest that reads back
  EXPECT_EQ(json_number(12193230605.0), "12193230605");
  EXPECT_EQ(json_number(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
}

TEST(Json, NonFiniteNumbersAreNull) {
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_number(-std::numeric_limits<double>::infinity()), "null");
}

TEST(Json, ReportsStartWithTheSchemaVersion) {
  JsonWriter j = json_report();
  j.member("name", "x").key("list").begin_array();
  j.begin_object().member("a", 1).member("b", std::vector<long>{1, 2}).end_object();
  j.begin_object().member("a", 2).member("c", std::optional<double>{}).end_object();
  j.end_array().member("flags", std::vector<std::string>{}).member("ok", true).member("empty", std::vector<int>{});
  EXPECT_EQ(j.end_object().str(), "{\n  \"schema_version\": " + std::to_string(json_schema_version) +
                                      ",\n  \"name\": \"x\",\n  \"list\": [\n    {\"a\": 1, \"b\": [1, 2]},\n"
                                      "    {\"a\": 2, \"c\": null}\n  ],\n  \"flags\": [],\n  \"ok\": true,\n"
                                      "  \"empty\": []\n}\n");
}

TEST(Json, KeysAreEscapedToo) {
  JsonWriter j;
  j.begin_object().member("we\"ird", 1.5).end_object();
  EXPECT_EQ(j.str(), "{\n  \"we\\\"ird\": 1.5\n}\n");
}

TEST(Json, MisuseIsRefused) {
  {
    JsonWriter j;
    j.begin_object();
    EXPECT_THROW(j.value(1), std::logic_error);  // a member needs a key
    EXPECT_THROW(j.end_array(), std::logic_error);
    EXPECT_THROW(j.str(), std::logic_error);  // unfinished
    j.key("k");
    EXPECT_THROW(j.key("again"), std::logic_error);
    EXPECT_THROW(j.end_object(), std::logic_error);  // the key has no value
  }
  {
    JsonWriter j;
    j.begin_array().end_array();
    EXPECT_THROW(j.value(1), std::logic_error);  // one document
    EXPECT_THROW(j.key("k"), std::logic_error);
    EXPECT_EQ(j.str(), "[]\n");
  }
}

}  // namespace
