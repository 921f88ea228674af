// parse_json (engine/json_parse.h) against nlohmann's Json::parse(text, nullptr, false): the same
// inputs accepted, the same values built, number types included. Hand-picked boundary cases, then
// every JSON file of the repository and the shared corpus, thousands of deterministic mutations
// of them, and random documents.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json_parse.h"
#include "tests/support/sanitizers.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit {
namespace json_parse_test {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// Where `a` and `b` differ (type, value, key order), or nullopt. Floats compare bitwise so that
// -0.0 and 0.0 differ.
std::optional<std::string> difference(const Json& a, const Json& b, const std::string& path = "") {
  if (a.type() != b.type()) {
    return path + ": type " + a.type_name() + " vs " + b.type_name() + " (" + a.dump() + " vs " +
           b.dump() + ")";
  }
  switch (a.type()) {
    case Json::value_t::object: {
      if (a.size() != b.size()) return path + ": object sizes differ";
      auto ib = b.begin();
      for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        if (ia.key() != ib.key()) return path + ": key " + ia.key() + " vs " + ib.key();
        if (auto d = difference(ia.value(), ib.value(), path + "/" + ia.key())) return d;
      }
      return std::nullopt;
    }
    case Json::value_t::array: {
      if (a.size() != b.size()) return path + ": array sizes differ";
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (auto d = difference(a[i], b[i], path + "/" + std::to_string(i))) return d;
      }
      return std::nullopt;
    }
    case Json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      if (std::memcmp(&x, &y, sizeof x) != 0) return path + ": " + a.dump() + " vs " + b.dump();
      return std::nullopt;
    }
    default:
      if (a != b) return path + ": " + a.dump() + " vs " + b.dump();
      return std::nullopt;
  }
}

// What parse_admission_review_json builds from text nlohmann reads as `j`: `j` without the
// managedFields of request.object.metadata and request.oldObject.metadata.
Json without_managed_fields(Json j) {
  Json* request = find_member(j, "request");
  for (const char* key : {"object", "oldObject"}) {
    Json* object = request != nullptr ? find_member(*request, key) : nullptr;
    Json* metadata = object != nullptr ? find_member(*object, "metadata") : nullptr;
    if (metadata != nullptr) metadata->erase("managedFields");
  }
  return j;
}

// nullopt when the review parse agrees with nlohmann on `text` (`expected`): it accepts and
// refuses the same texts, and builds nlohmann's tree less the objects' managedFields.
std::optional<std::string> review_disagreement(std::string_view text, const Json& expected) {
  Json review;
  const bool ok =
      parse_admission_review_json(text, review, std::numeric_limits<std::size_t>::max()) ==
      JsonParseResult::kOk;
  if (ok == expected.is_discarded()) {
    return std::string(ok ? "parse_admission_review_json accepts"
                          : "parse_admission_review_json rejects") +
           " what nlohmann " + (ok ? "rejects" : "accepts");
  }
  if (!ok) {
    if (!review.is_discarded()) return "rejected as a review, but the output is not discarded"s;
    return std::nullopt;
  }
  if (auto d = difference(review, without_managed_fields(expected))) return "as a review: " + *d;
  return std::nullopt;
}

// nullopt when parse_json and nlohmann agree on `text`, else what differs; the review parse too.
std::optional<std::string> disagreement(std::string_view text) {
  const Json expected = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  Json actual;
  const bool ok = parse_json(text, actual);
  if (ok == expected.is_discarded()) {
    return std::string(ok ? "parse_json accepts" : "parse_json rejects") + " what nlohmann " +
           (ok ? "rejects" : "accepts");
  }
  if (!ok) {
    if (!actual.is_discarded()) return "rejected, but the output is not discarded"s;
    return review_disagreement(text, expected);
  }
  if (auto d = difference(actual, expected)) return d;
  if (actual.dump() != expected.dump()) return "dumps differ"s;
  return review_disagreement(text, expected);
}

// A printable rendering of an input for failure messages.
std::string show(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, 300)) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  if (text.size() > 300) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

// Checks parity on every input; reports the first few disagreements, counts the rest.
void check_all(const std::vector<std::string>& inputs, std::size_t& accepted) {
  std::size_t failures = 0;
  for (const std::string& text : inputs) {
    if (auto d = disagreement(text)) {
      if (++failures <= 10) {
        FAIL_CHECK("input: " << show(text) << "\n" << *d);
      }
    } else if (!Json::parse(text, nullptr, false).is_discarded()) {
      ++accepted;
    }
  }
  CHECK(failures == 0);
  if (std::getenv("GPUADMIT_PARSE_COUNTS")) {
    std::printf("%zu inputs, %zu accepted\n", inputs.size(), accepted);
  }
}

struct Expected {
  std::string text;
  bool valid;
  Json::value_t type = Json::value_t::null;
  std::string dump = "";  // empty: not checked beyond parity
};

// Each case agrees with nlohmann, is accepted or refused as listed, and has the listed type and
// text.
void check_expected(const std::vector<Expected>& cases) {
  for (const Expected& c : cases) {
    INFO("input: " << show(c.text));
    CHECK(disagreement(c.text).value_or("") == "");
    Json j;
    REQUIRE(parse_json(c.text, j) == c.valid);
    if (!c.valid) {
      CHECK(j.is_discarded());
      continue;
    }
    CHECK(j.type() == c.type);
    if (!c.dump.empty()) CHECK(j.dump() == c.dump);
  }
}

TEST_CASE("parse_json: numbers at every boundary are typed and valued as nlohmann does") {
  using T = Json::value_t;
  const std::vector<Expected> cases = {
      {"0", true, T::number_unsigned, "0"},
      {"-0", true, T::number_integer, "0"},
      {"7", true, T::number_unsigned, "7"},
      {"-7", true, T::number_integer, "-7"},
      {"18446744073709551615", true, T::number_unsigned, "18446744073709551615"},
      {"18446744073709551616", true, T::number_float, "1.8446744073709552e+19"},
      {"99999999999999999999", true, T::number_float, "1e+20"},
      {"9223372036854775807", true, T::number_unsigned, "9223372036854775807"},
      {"-9223372036854775807", true, T::number_integer, "-9223372036854775807"},
      {"-9223372036854775808", true, T::number_integer, "-9223372036854775808"},
      {"-9223372036854775809", true, T::number_float, "-9.223372036854776e+18"},
      {"-18446744073709551616", true, T::number_float, "-1.8446744073709552e+19"},
      {"9007199254740993", true, T::number_unsigned, "9007199254740993"},
      {"9007199254740993.0", true, T::number_float, "9.007199254740992e+15"},
      {"9007199254740995e0", true, T::number_float, "9.007199254740996e+15"},
      {"0.1", true, T::number_float, "0.1"},
      {"-0.0", true, T::number_float, "-0.0"},
      {"0e0", true, T::number_float, "0.0"},
      {"-0e-5", true, T::number_float, "-0.0"},
      {"1.5", true, T::number_float, "1.5"},
      {"1E2", true, T::number_float, "100.0"},
      {"1e+2", true, T::number_float, "100.0"},
      {"1.25e-2", true, T::number_float, "0.0125"},
      {"1e22", true, T::number_float, "1e+22"},
      {"1e23", true, T::number_float, "9.999999999999999e+22"},  // nlohmann's dump,
      {"8.98846567431158e307", true, T::number_float, "8.98846567431158e+307"},
      {"1.7976931348623157e308", true, T::number_float, "1.7976931348623157e+308"},
      {"1.7976931348623159e308", false},
      {"1e400", false},
      {"-1e400", false},
      {"1" + std::string(400, '0'), false},
      {"1.5e-320", true, T::number_float, "1.5e-320"},
      {"4.9e-324", true, T::number_float, "5e-324"},
      {"2e-324", true, T::number_float, "0.0"},
      {"1e-400", true, T::number_float, "0.0"},
      {"-1e-400", true, T::number_float, "-0.0"},
      {"0." + std::string(400, '0') + "1e400", true, T::number_float, "0.1"},
      {"1e99999999999999999999999", false},
      {"0e99999999999999999999999", true, T::number_float, "0.0"},
      {"123456789012345678901234567890", true, T::number_float, "1.2345678901234568e+29"},
      {"0.30000000000000004", true, T::number_float, "0.30000000000000004"},
      {"2.2250738585072011e-308", true, T::number_float},
      {"[0,-0,1.0,-1]", true, T::array, "[0,0,1.0,-1]"},
      {"01", false},
      {"-01", false},
      {"00", false},
      {"1.", false},
      {"1.e5", false},
      {".5", false},
      {"-", false},
      {"-a", false},
      {"+1", false},
      {"1e", false},
      {"1e+", false},
      {"1e-", false},
      {"0x10", false},
      {"1.5.3", false},
      {"- 1", false},
      {"NaN", false},
      {"Infinity", false},
      {"-Infinity", false},
      {"[1,01]", false},
      {"[1.]", false},
  };
  check_expected(cases);
}

TEST_CASE("parse_json: strings, escapes, surrogates and UTF-8 as nlohmann reads them") {
  using T = Json::value_t;
  const std::vector<Expected> cases = {
      {R"("")", true, T::string, R"("")"},
      {R"("plain text that is longer than sixteen bytes")", true, T::string},
      {R"("\"\\\/\b\f\n\r\t")", true, T::string, R"("\"\\/\b\f\n\r\t")"},
      {R"("\u0041\u00e9\u20AC")", true, T::string, "\"A\xC3\xA9\xE2\x82\xAC\""},
      {R"("\u0000")", true, T::string, R"("\u0000")"},
      {R"("\u001f\u007F")", true, T::string, "\"\\u001f\x7F\""},
      {R"("\uD83D\uDE00")", true, T::string, "\"\xF0\x9F\x98\x80\""},
      {R"("\ud800\udc00")", true, T::string, "\"\xF0\x90\x80\x80\""},
      {R"("\uDBFF\uDFFF")", true, T::string, "\"\xF4\x8F\xBF\xBF\""},
      {R"("a\uD83D\uDE00b\u00e9c")", true, T::string},
      {R"("\uD83D")", false},
      {R"("\uD83Dx")", false},
      {R"("\uD83D\n")", false},
      {R"("\uD83D\u0041")", false},
      {R"("\uD83D\uD83D")", false},
      {R"("\uDE00")", false},
      {R"("\uDE00\uD83D")", false},
      {R"("\u12")", false},
      {R"("\u12G4")", false},
      {R"("\u")", false},
      {R"("\x41")", false},
      {R"("\a")", false},
      {R"("\U0041")", false},
      {R"("\)", false},
      {R"("abc)", false},
      {"\"", false},
      {"\"a\tb\"", false},
      {"\"a\nb\"", false},
      {"\"\x01\"", false},
      {"\"\x1F\"", false},
      {"\"a\0b\""s, false},
      {"\"\x7F\"", true, T::string},
      {"\"\xC3\xA9\"", true, T::string},
      {"\"\xC2\x80\"", true, T::string},
      {"\"\xDF\xBF\"", true, T::string},
      {"\"\xE0\xA0\x80\"", true, T::string},
      {"\"\xED\x9F\xBF\"", true, T::string},
      {"\"\xEE\x80\x80\"", true, T::string},
      {"\"\xEF\xBF\xBF\"", true, T::string},
      {"\"\xF0\x90\x80\x80\"", true, T::string},
      {"\"\xF0\x9F\x98\x80 emoji in a longer string\"", true, T::string},
      {"\"\xF3\xBF\xBF\xBF\"", true, T::string},
      {"\"\xF4\x8F\xBF\xBF\"", true, T::string},
      {"\"\xC0\xAF\"", false},          // overlong '/'
      {"\"\xC1\xBF\"", false},          // overlong
      {"\"\xE0\x80\xAF\"", false},      // overlong
      {"\"\xE0\x9F\xBF\"", false},      // overlong
      {"\"\xF0\x80\x80\xAF\"", false},  // overlong
      {"\"\xF0\x8F\xBF\xBF\"", false},  // overlong
      {"\"\xED\xA0\x80\"", false},      // encoded surrogate U+D800
      {"\"\xED\xBF\xBF\"", false},      // encoded surrogate U+DFFF
      {"\"\xF4\x90\x80\x80\"", false},  // above U+10FFFF
      {"\"\xF5\x80\x80\x80\"", false},
      {"\"\xFF\"", false},
      {"\"\x80\"", false},
      {"\"\xBF\"", false},
      {"\"\xC3\"", false},
      {"\"\xC3", false},
      {"\"\xC3\x28\"", false},
      {"\"\xE2\x82\"", false},
      {"\"\xE2\x82\x28\"", false},
      {"\"\xF0\x9F\x98\"", false},
      {"\"\xF0\x9F\x98\x28\"", false},
  };
  check_expected(cases);
  Json j;
  REQUIRE(parse_json(R"("a\u0000b")", j));
  CHECK(j.get<std::string>() == "a\0b"s);
}

TEST_CASE("parse_json: structure, whitespace, BOM, NUL, trailing bytes and duplicate keys") {
  using T = Json::value_t;
  const std::vector<Expected> cases = {
      {"", false},
      {" ", false},
      {" \t\r\n", false},
      {"\0"s, false},
      {" \0"s, false},
      {"true", true, T::boolean, "true"},
      {"false", true, T::boolean, "false"},
      {"null", true, T::null, "null"},
      {"tru", false},
      {"truex", false},
      {"True", false},
      {"nul", false},
      {"nulll", false},
      {"{}", true, T::object, "{}"},
      {"[]", true, T::array, "[]"},
      {" \t\r\n[ 1 , 2 ]\n\r\t ", true, T::array, "[1,2]"},
      {"{ \"a\" : [ ] , \"b\" : { } }", true, T::object, R"({"a":[],"b":{}})"},
      {"\f1", false},
      {"\v1", false},
      {"1\f", false},
      {"[1\v]", false},
      {"\xC2\xA0"
       "1",
       false},
      {"\xEF\xBB\xBF{}", true, T::object, "{}"},
      {"\xEF\xBB\xBF \"x\"", true, T::string, R"("x")"},
      {"\xEF\xBB\xBF", false},
      {" \xEF\xBB\xBF{}", false},
      {"\xEF\xBB{}", false},
      {"\xEF{}", false},
      {"\xEF\xBB\xBF\xEF\xBB\xBF{}", false},
      {"[\xEF\xBB\xBF]", false},
      {"{}\0"s, true, T::object, "{}"},
      {"{} \0garbage"s, true, T::object, "{}"},
      {std::string("1\0"
                   "2",
                   3),
       true, T::number_unsigned, "1"},
      {"[1,\0]"s, false},
      {"[\0]"s, false},
      {"{} x", false},
      {"{}}", false},
      {"[1]]", false},
      {"1 2", false},
      {"\"a\" \"b\"", false},
      {"[1,]", false},
      {"[,1]", false},
      {"[1 2]", false},
      {"[1,,2]", false},
      {R"({"a":1,})", false},
      {R"({"a"})", false},
      {R"({"a":})", false},
      {R"({"a" 1})", false},
      {R"({"a"::1})", false},
      {R"({,"a":1})", false},
      {R"({1:2})", false},
      {R"({a:2})", false},
      {R"({'a':2})", false},
      {"[", false},
      {"{", false},
      {"]", false},
      {"}", false},
      {"[[[]]", false},
      {"[{]}", false},
      {"{\"a\":[}", false},
      {"/* c */ 1", false},
      {"// c\n1", false},
      {R"({"a":1,"b":2,"a":3})", true, T::object, R"({"a":3,"b":2})"},
      {R"({"a":{"x":1},"b":2,"a":[true]})", true, T::object, R"({"a":[true],"b":2})"},
      {R"({"a":[1],"a":{"y":{"z":1,"z":2}},"c":0})", true, T::object,
       R"({"a":{"y":{"z":2}},"c":0})"},
      {R"({"":1,"":2})", true, T::object, R"({"":2})"},
      {R"({"\u0061":1,"a":2})", true, T::object, R"({"a":2})"},
      {R"({"a":1,"A":2})", true, T::object, R"({"a":1,"A":2})"},
      {R"([{"k":1,"k":2},{"k":3}])", true, T::array, R"([{"k":2},{"k":3}])"},
  };
  check_expected(cases);
}

TEST_CASE("parse_json: deep nesting parses without recursion") {
  constexpr std::size_t kDepth = 200000;
  const std::string deep = std::string(kDepth, '[') + std::string(kDepth, ']');
  Json j;
  REQUIRE(parse_json(deep, j));
  CHECK(j.is_array());
  CHECK_FALSE(parse_json(std::string(kDepth, '['), j));
  CHECK(j.is_discarded());
  CHECK_FALSE(parse_json(std::string(kDepth, '{'), j));
  std::string objects;
  for (std::size_t i = 0; i < 50000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(50000, '}');
  REQUIRE(parse_json(objects, j));
  CHECK(j.is_object());
  // Shallow enough for nlohmann's recursive dump and for difference(), whose frames are several
  // times larger under ASan (3,000 levels overflowed its stack there).
  const std::string moderate = std::string(1000, '[') + "1" + std::string(1000, ']');
  CHECK(disagreement(moderate).value_or("") == "");
}

TEST_CASE("parse_json: a depth limit stops where json_depth_exceeds would") {
  struct Case {
    std::string text;
    JsonParseResult expected;
  };
  const std::vector<Case> cases = {
      {std::string(100, '[') + std::string(100, ']'), JsonParseResult::kOk},
      {std::string(101, '[') + std::string(101, ']'), JsonParseResult::kTooDeep},
      {std::string(99, '[') + "{\"a\":[1]}" + std::string(99, ']'), JsonParseResult::kTooDeep},
      {std::string(99, '[') + "{\"a\":1}" + std::string(99, ']'), JsonParseResult::kOk},
      {"[\"[[[[\"]", JsonParseResult::kOk},
      // Invalid before it gets deep: kInvalid, even though it nests deeper afterwards.
      {"[x" + std::string(200, '['), JsonParseResult::kInvalid},
      {std::string(200, '[') + "x", JsonParseResult::kTooDeep},
      {"", JsonParseResult::kInvalid},
  };
  for (const Case& c : cases) {
    INFO(c.text.substr(0, 40));
    Json j;
    CHECK(parse_json(c.text, j, 100) == c.expected);
    if (c.expected != JsonParseResult::kOk) CHECK(j.is_discarded());
    if (c.expected == JsonParseResult::kTooDeep) CHECK(json_depth_exceeds(c.text, 100));
    if (c.expected == JsonParseResult::kOk) {
      CHECK_FALSE(json_depth_exceeds(c.text, 100));
      CHECK(j == Json::parse(c.text));
    }
  }
}

TEST_CASE("parse_admission_review_json: the depth limit counts inside the managedFields it drops") {
  // Wraps `inner` as a pod's managedFields: 4 levels (review, request, object, metadata) above.
  const auto review = [](const std::string& inner) {
    return R"({"request":{"object":{"metadata":{"name":"p","managedFields":)" + inner +
           R"(,"labels":{"a":"b"}},"spec":{}}}})";
  };
  struct Case {
    std::string text;
    JsonParseResult expected;
  };
  const std::vector<Case> cases = {
      {review(std::string(96, '[') + std::string(96, ']')), JsonParseResult::kOk},
      {review(std::string(97, '[') + std::string(97, ']')), JsonParseResult::kTooDeep},
      {review(std::string(95, '[') + "{\"a\":1}" + std::string(95, ']')), JsonParseResult::kOk},
      {review(std::string(95, '[') + "{\"a\":[]}" + std::string(95, ']')),
       JsonParseResult::kTooDeep},
      {review("[x" + std::string(200, '[')), JsonParseResult::kInvalid},
      {review(std::string(200, '[') + "x"), JsonParseResult::kTooDeep},
      {review(R"([{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{}}}}}])"),
       JsonParseResult::kOk},
      {review(R"([{"time":1e400}])"), JsonParseResult::kInvalid},
      {review(R"(["\uD800"])"), JsonParseResult::kInvalid},
      {review(R"([1,])"), JsonParseResult::kInvalid},
      {review(R"({"a" 1})"), JsonParseResult::kInvalid},
      {review(R"({"a":1,})"), JsonParseResult::kInvalid},
      {review("[\"\x80\"]"), JsonParseResult::kInvalid},
  };
  for (const Case& c : cases) {
    INFO(c.text.substr(0, 90));
    Json whole, review_tree;
    CHECK(parse_json(c.text, whole, 100) == c.expected);
    CHECK(parse_admission_review_json(c.text, review_tree, 100) == c.expected);
    if (c.expected != JsonParseResult::kOk) {
      CHECK(review_tree.is_discarded());
      continue;
    }
    CHECK(review_tree == without_managed_fields(whole));
    CHECK(review_tree.dump() ==
          R"({"request":{"object":{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{}}}})");
  }
}

TEST_CASE("parse_admission_review_json: only the request's object and oldObject lose theirs") {
  const std::string text =
      R"({"managedFields":1,"request":{"managedFields":2,"metadata":{"managedFields":3},)"
      R"("object":{"metadata":{"managedFields":[4],"name":"a"},)"
      R"("spec":{"template":{"metadata":{"managedFields":5}}}},)"
      R"("oldObject":{"metadata":{"name":"b","managed\u0046ields":[6]}},)"
      R"("options":{"metadata":{"managedFields":7}}},"object":{"metadata":{"managedFields":8}}})";
  Json tree;
  REQUIRE(parse_admission_review_json(text, tree, 100) == JsonParseResult::kOk);
  CHECK(
      tree.dump() ==
      R"({"managedFields":1,"request":{"managedFields":2,"metadata":{"managedFields":3},)"
      R"("object":{"metadata":{"name":"a"},"spec":{"template":{"metadata":{"managedFields":5}}}},)"
      R"("oldObject":{"metadata":{"name":"b"}},"options":{"metadata":{"managedFields":7}}},)"
      R"("object":{"metadata":{"managedFields":8}}})");
  // A list of reviews is no review: nothing is dropped.
  Json list;
  REQUIRE(parse_admission_review_json("[" + text + "]", list, 100) == JsonParseResult::kOk);
  CHECK(list == Json::parse("[" + text + "]"));
}

TEST_CASE("parse_json: objects with many members keep nlohmann's repeated-key rule") {
  // Past 16 members the repeated-key check switches from a scan to a hash index: both agree
  // with nlohmann (first position, last value).
  for (const std::size_t members : {5u, 16u, 17u, 40u, 3000u}) {
    std::string text = "{";
    for (std::size_t i = 0; i < members; ++i) {
      text += "\"k" + std::to_string(i % (members / 2 + 1)) + "\":" + std::to_string(i) + ",";
    }
    text += "\"k0\":\"last\",\"\":{\"\":1,\"\":2}}";
    INFO(members);
    CHECK(disagreement(text).value_or("") == "");
  }
  // 250,000 distinct keys: linear in the member count (quadratic took minutes).
  std::string wide = "{";
  for (int i = 0; i < 250000; ++i)
    wide += "\"key" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  wide += "\"key7\":true}";
  Json j;
  REQUIRE(parse_json(wide, j));
  CHECK(j.size() == 250000);
  CHECK(j["key7"] == true);
  CHECK(j.begin().key() == "key0");
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> files_under(const fs::path& dir, const std::vector<std::string>& exts) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    if (std::find(exts.begin(), exts.end(), entry.path().extension().string()) != exts.end()) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every .json file of tests/, bench/, examples/ and the shared corpus, plus the YAML documents
// of the golden cases and the corpus rendered as JSON (compact and indented).
std::vector<std::string> real_documents() {
  std::vector<std::string> docs;
  const fs::path source(GPUADMIT_SOURCE_DIR);
  const fs::path corpus = fs::path(GPUADMIT_SHARED_DIR) / "corpus";
  for (const fs::path& dir : {source / "tests", source / "bench", source / "examples", corpus}) {
    for (const fs::path& f : files_under(dir, {".json"})) docs.push_back(read_file(f));
  }
  for (const fs::path& dir : {source / "tests" / "cases", corpus}) {
    for (const fs::path& f : files_under(dir, {".yaml", ".yml"})) {
      try {
        for (const Json& doc : testing::yaml_file_documents(f.string())) {
          docs.push_back(doc.dump());
          docs.push_back(doc.dump(2));
        }
      } catch (const std::exception&) {
        // Not YAML this reader takes: nothing to render.
      }
    }
  }
  return docs;
}

TEST_CASE("parse_json: every JSON file and rendered YAML document parses as nlohmann parses it") {
  const std::vector<std::string> docs = real_documents();
  INFO("documents: " << docs.size());
  CHECK(docs.size() > 40);
  std::size_t accepted = 0;
  check_all(docs, accepted);
  CHECK(accepted > 40);
}

// Bytes that change the meaning of JSON text, for the mutations.
constexpr unsigned char kSpecial[] = {'"',  '\\', '{',  '}',  '[',  ']',  ',',  ':',  '0',  '1',
                                      '-',  '+',  '.',  'e',  'E',  'u',  'n',  't',  'f',  ' ',
                                      '\t', '\n', '\r', '\f', 0x00, 0x01, 0x1F, 0x7F, 0x80, 0xBF,
                                      0xC0, 0xC3, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};

std::string mutate(std::string text, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    const std::size_t n = text.size();
    const std::size_t at = n == 0 ? 0 : rng() % n;
    const auto special = static_cast<char>(kSpecial[rng() % sizeof kSpecial]);
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (n > 0) text[at] = static_cast<char>(text[at] ^ (1 << (rng() % 8)));
        break;
      case 1:  // overwrite with a special byte
        if (n > 0) text[at] = special;
        break;
      case 2:  // insert a special byte
        text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), special);
        break;
      case 3:  // delete a byte
        if (n > 0) text.erase(at, 1);
        break;
      case 4:  // truncate
        text.resize(at);
        break;
      case 5: {  // duplicate a slice (repeats keys, nests deeper)
        const std::size_t len = n == 0 ? 0 : rng() % std::min<std::size_t>(64, n - at);
        text.insert(at, text.substr(at, len));
        break;
      }
      default: {  // a number or escape at a random place
        static const char* const kTokens[] = {"18446744073709551616",
                                              "-9223372036854775809",
                                              "1e400",
                                              "-0",
                                              "1.5e-320",
                                              "\\uD83D\\uDE00",
                                              "\\uDE00",
                                              "\\u0000",
                                              "0.1e1",
                                              "\xEF\xBB\xBF"};
        text.insert(at, kTokens[rng() % (sizeof kTokens / sizeof kTokens[0])]);
        break;
      }
    }
  }
  return text;
}

// Under AddressSanitizer a third of the mutations (tests/support/sanitizers.h): this test was
// the longest of CI's sanitizer phase (105 s).
constexpr int kReviewMutations = testing::kUnderAddressSanitizer ? 1000 : 3000;
constexpr int kDocumentMutations = testing::kUnderAddressSanitizer ? 7 : 20;

TEST_CASE("parse_json: mutated real documents are accepted and rejected as nlohmann does") {
  const std::vector<std::string> docs = real_documents();
  std::mt19937_64 rng(20240611);
  std::vector<std::string> inputs;
  for (const char* file : {"webhook-review.json", "webhook-review-managed-fields.json"}) {
    const std::string review = read_file(fs::path(GPUADMIT_SOURCE_DIR) / "bench" / file);
    for (int i = 0; i < kReviewMutations; ++i) inputs.push_back(mutate(review, rng));
  }
  for (const std::string& doc : docs) {
    if (doc.size() > 200000) continue;  // keeps the run short; the file itself is checked above
    for (int i = 0; i < kDocumentMutations; ++i) inputs.push_back(mutate(doc, rng));
  }
  INFO("mutations: " << inputs.size());
  std::size_t accepted = 0;
  check_all(inputs, accepted);
  // Some mutations stay valid (a changed digit or letter), most do not.
  CHECK(accepted > 100);
  CHECK(accepted < inputs.size());
}

// Random JSON text: odd whitespace, boundary numbers, escapes, UTF-8, repeated keys, nesting.
class RandomDocument {
 public:
  explicit RandomDocument(std::uint64_t seed) : rng_(seed) {}

  std::string make() {
    out_.clear();
    if (rng_() % 8 == 0) out_ += "\xEF\xBB\xBF";
    space();
    value(0);
    space();
    return out_;
  }

 private:
  void space() {
    static const char* const kSpaces[] = {"", "", "", " ", "\n  ", "\t", "\r\n", " \t \n"};
    out_ += kSpaces[rng_() % 8];
  }

  void number() {
    static const char* const kNumbers[] = {"0",
                                           "-0",
                                           "1",
                                           "-1",
                                           "42",
                                           "0.5",
                                           "-0.0",
                                           "1e3",
                                           "1E-3",
                                           "2.5e+10",
                                           "123456789",
                                           "18446744073709551615",
                                           "18446744073709551616",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "-9223372036854775809",
                                           "9007199254740993",
                                           "9007199254740993.5",
                                           "1.7976931348623157e308",
                                           "4.9e-324",
                                           "1e-400",
                                           "0.1",
                                           "3.141592653589793238462643383279",
                                           "100000000000000000000000",
                                           "1e22",
                                           "1e23"};
    if (rng_() % 3 == 0) {
      // A random integer or decimal.
      if (rng_() % 2) out_ += '-';
      out_ += std::to_string(rng_() >> (rng_() % 64));
      if (rng_() % 2) out_ += "." + std::to_string(rng_() % 100000);
      if (rng_() % 3 == 0) out_ += "e" + std::to_string(static_cast<int>(rng_() % 700) - 350);
      return;
    }
    out_ += kNumbers[rng_() % (sizeof kNumbers / sizeof kNumbers[0])];
  }

  void string(bool key) {
    static const char* const kPieces[] = {"a",
                                          "name",
                                          "nvidia.com/gpu",
                                          " ",
                                          "\\\"",
                                          "\\\\",
                                          "\\/",
                                          "\\n",
                                          "\\t",
                                          "\\b",
                                          "\\f",
                                          "\\r",
                                          "\\u0041",
                                          "\\u00e9",
                                          "\\u20ac",
                                          "\\uD83D\\uDE00",
                                          "\\u0000",
                                          "\xC3\xA9",
                                          "\xE2\x82\xAC",
                                          "\xF0\x9F\x98\x80",
                                          "\x7F",
                                          "a longer run of plain ASCII characters"};
    out_ += '"';
    const int pieces = key ? static_cast<int>(rng_() % 2) : static_cast<int>(rng_() % 5);
    for (int i = 0; i < pieces; ++i) out_ += kPieces[rng_() % (sizeof kPieces / sizeof kPieces[0])];
    out_ += '"';
  }

  void value(int depth) {
    const unsigned kind = depth > 6 ? rng_() % 5 : rng_() % 7;
    switch (kind) {
      case 0:
        out_ += (rng_() % 2) ? "true" : "false";
        break;
      case 1:
        out_ += "null";
        break;
      case 2:
      case 3:
        number();
        break;
      case 4:
        string(false);
        break;
      case 5: {
        out_ += '[';
        const int n = static_cast<int>(rng_() % 5);
        for (int i = 0; i < n; ++i) {
          if (i) out_ += ',';
          space();
          value(depth + 1);
          space();
        }
        out_ += ']';
        break;
      }
      default: {
        out_ += '{';
        const int n = static_cast<int>(rng_() % 6);
        for (int i = 0; i < n; ++i) {
          if (i) out_ += ',';
          space();
          string(true);  // few distinct keys: many repeats
          space();
          out_ += ':';
          space();
          value(depth + 1);
        }
        space();
        out_ += '}';
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  std::string out_;
};

TEST_CASE("parse_json: random documents and their mutations agree with nlohmann") {
  RandomDocument gen(7);
  std::mt19937_64 rng(11);
  std::vector<std::string> valid, mutated;
  for (int i = 0; i < 5000; ++i) {
    valid.push_back(gen.make());
    mutated.push_back(mutate(valid.back(), rng));
  }
  std::size_t accepted = 0;
  check_all(valid, accepted);
  // Only "1e400"-like overflows and lone tokens make generated documents invalid.
  CHECK(accepted > 4000);
  std::size_t mutated_accepted = 0;
  check_all(mutated, mutated_accepted);
  CHECK(mutated_accepted < mutated.size());
}

// Short random strings over the bytes that matter to the lexer: numbers made of digits, signs,
// dots and exponents; strings with escapes, control and non-ASCII bytes at every offset of the
// 16- and 8-byte scans; and plain byte soup.
TEST_CASE("parse_json: random token soup agrees with nlohmann") {
  static const char kBytes[] =
      "0123456789-+.eE\"\\u{}[],: \t\n\rtruefalsnlDdAaFf/bnrt\x01\x1f\x7f\x80\xbf\xc2\xc3"
      "\xdf\xe0\xed\xef\xf0\xf4\xf5\xff";
  const std::string bytes = std::string(kBytes, sizeof kBytes - 1) + '\0';
  std::mt19937_64 rng(5);
  std::vector<std::string> inputs;
  for (int i = 0; i < 100000; ++i) {
    std::string s;
    switch (rng() % 4) {
      case 0: {
        const int len = static_cast<int>(rng() % 30);
        for (int k = 0; k < len; ++k) s += "0123456789-+.eE"[rng() % 15];
        if (rng() % 2) s = "[" + s + "]";
        break;
      }
      case 1: {
        s = "\"";
        const int len = static_cast<int>(rng() % 48);
        for (int k = 0; k < len; ++k) {
          s += rng() % 6 == 0 ? bytes[rng() % bytes.size()] : "abcdefghij"[rng() % 10];
        }
        if (rng() % 8) s += '"';
        if (rng() % 2) s = "{" + s + ":1}";
        break;
      }
      default: {
        const int len = static_cast<int>(rng() % 40);
        for (int k = 0; k < len; ++k) s += bytes[rng() % bytes.size()];
        break;
      }
    }
    inputs.push_back(std::move(s));
  }
  std::size_t accepted = 0;
  check_all(inputs, accepted);
  CHECK(accepted > 5000);
}

}  // namespace
}  // namespace json_parse_test
}  // namespace gpuadmit
