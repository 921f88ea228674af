// engine/json.h's lookups, table-driven: find_pointer against nlohmann's own json_pointer walk
// (`contains` then `at`), which it replaces; member_object and member_array on each shape of
// parent and member.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/json.h"

namespace gpuadmit {
namespace json_helpers_test {
namespace {

const Json kObject = Json::parse(R"({
  "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}},
  "a/b": {"m~n": 1},
  "": {"": "empty keys"},
  "list": [[0, 1], 2],
  "text": "scalar",
  "nothing": null,
  "01": "a key of digits"
})");

TEST_CASE("find_pointer finds what contains and at find, and nothing where they find nothing") {
  for (const std::string& text : std::vector<std::string>{
           "",
           "/spec",
           "/spec/template/spec/containers/0",
           "/spec/template/spec/containers/1/name",
           "/spec/template/spec/containers/2",
           "/spec/template/spec/containers/-",
           "/spec/template/spec/containers/01",
           "/spec/template/spec/containers/1a",
           "/spec/template/spec/containers/ 1",
           "/spec/template/spec/containers/9999999999999999999",
           "/spec/missing",
           "/a~1b/m~0n",
           "/a/b",
           "/",
           "//",
           "/list/0/1",
           "/list/1",
           "/list/1/0",
           "/text/0",
           "/text/x",
           "/nothing",
           "/nothing/x",
           "/01",
       }) {
    INFO(text);
    const JsonPointer pointer(text);
    const bool exists = kObject.contains(pointer);
    const Json* found = find_pointer(kObject, pointer);
    CHECK((found != nullptr) == exists);
    if (exists && found != nullptr) CHECK(found == &kObject.at(pointer));
  }
  // An index past size_t: nlohmann's contains throws (out_of_range 410); nothing is found here.
  CHECK(find_pointer(kObject, JsonPointer("/list/99999999999999999999")) == nullptr);
}

TEST_CASE("pointer_tokens are the pointer's reference tokens, unescaped, root first") {
  CHECK(pointer_tokens(JsonPointer("")).empty());
  CHECK(pointer_tokens(JsonPointer("/spec/template/spec")) ==
        std::vector<std::string>{"spec", "template", "spec"});
  CHECK(pointer_tokens(JsonPointer("/a~1b/m~0n//0")) ==
        std::vector<std::string>{"a/b", "m~n", "", "0"});
}

TEST_CASE("member_object and member_array make, keep or refuse the member") {
  struct Case {
    const char* parent;
    bool array;  // member_array, else member_object
    const char* after;
    bool found;  // a member is returned (else nullptr)
  };
  const std::vector<Case> cases = {
      {R"({})", false, R"({"m": {}})", true},
      {R"({})", true, R"({"m": []})", true},
      {R"({"a": 1})", false, R"({"a": 1, "m": {}})", true},
      {R"({"m": null})", false, R"({"m": {}})", true},
      {R"({"m": null})", true, R"({"m": []})", true},
      {R"({"m": {"k": 1}})", false, R"({"m": {"k": 1}})", true},
      {R"({"m": [1]})", true, R"({"m": [1]})", true},
      {R"({"m": [1]})", false, R"({"m": [1]})", false},
      {R"({"m": {"k": 1}})", true, R"({"m": {"k": 1}})", false},
      {R"({"m": "text"})", false, R"({"m": "text"})", false},
      {R"([])", false, R"([])", false},
      {R"(null)", true, R"(null)", false},
  };
  for (const Case& c : cases) {
    INFO(c.parent << (c.array ? " member_array" : " member_object"));
    Json parent = Json::parse(c.parent);
    const Json* member = c.array ? member_array(parent, "m") : member_object(parent, "m");
    CHECK(parent == Json::parse(c.after));
    REQUIRE((member != nullptr) == c.found);
    if (member != nullptr) CHECK(member == &parent["m"]);
  }
}

TEST_CASE("empty_object and empty_array equal nlohmann's Json::object() and Json::array()") {
  CHECK(empty_object() == Json::object());
  CHECK(empty_object().is_object());
  CHECK(empty_array() == Json::array());
  CHECK(empty_array().is_array());
}

}  // namespace
}  // namespace json_helpers_test
}  // namespace gpuadmit
