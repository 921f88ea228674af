// dump_json / append_json (engine/json_dump.h) against nlohmann's Json::dump(-1, ' ', false, h):
// the same bytes for every value and error handler, the same exception for invalid UTF-8 under
// the strict handler.

#include <catch2/catch.hpp>

#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "engine/json.h"
#include "engine/json_dump.h"
#include "tests/support/yaml_to_json.h"

namespace json_dump_test {

namespace fs = std::filesystem;
using gpuadmit::Json;

namespace {

const std::vector<Json::error_handler_t> kHandlers = {
    Json::error_handler_t::strict, Json::error_handler_t::replace, Json::error_handler_t::ignore};

// Empty when dump_json writes (or throws) exactly what nlohmann does, else both texts.
std::string difference(const Json& j, Json::error_handler_t handler) {
  std::string expected, actual;
  try {
    expected = j.dump(-1, ' ', false, handler);
  } catch (const Json::type_error& e) {
    expected = std::string("throws ") + e.what();
  }
  try {
    actual = gpuadmit::dump_json(j, handler);
  } catch (const Json::type_error& e) {
    actual = std::string("throws ") + e.what();
  }
  return actual == expected ? std::string() : "nlohmann: " + expected + "\ndump_json: " + actual;
}

}  // namespace

TEST_CASE("json_dump: scalars, strings and containers are written as nlohmann writes them") {
  const std::vector<Json> values = {
      Json(nullptr),
      Json(true),
      Json(false),
      Json(0),
      Json(-1),
      Json(std::numeric_limits<std::int64_t>::min()),
      Json(std::numeric_limits<std::uint64_t>::max()),
      Json(0.0),
      Json(-0.0),
      Json(1.5),
      Json(1e300),
      Json(0.1),
      Json(std::numeric_limits<double>::quiet_NaN()),
      Json(""),
      Json("plain text 0123 ~/"),
      Json("quote \" backslash \\ slash /"),
      Json("controls \b\f\n\r\t \x01 \x1f end"),
      Json("del \x7f"),
      Json("utf-8 é ✓ 😀"),
      Json(std::string("invalid \xff\xfe utf-8")),
      Json(std::string("truncated \xc3")),
      Json(std::string("nul \0 inside", 12)),
      Json::array(),
      Json::object(),
      Json::parse(R"({"b":1,"a":[1,-2,3.25,"x",null,true,{"k\"ey":{}}],"é":"✓","":[[]]})"),
      Json::binary({1, 2, 3}),
  };
  for (const Json& j : values) {
    for (const auto handler : kHandlers) {
      INFO(static_cast<int>(handler));
      CHECK(difference(j, handler) == "");
    }
  }
  // Long strings are checked 16 bytes at a time: each byte that needs nlohmann's writing, at
  // every place of the blocks and of the tail; and the plain bytes next to those limits.
  for (const std::string special :
       {"\"", "\\", "\x7f", "\x01", "\x1f", "\x80", "\xc3\xa9", " ", "~"}) {
    for (size_t at = 0; at < 40; ++at) {
      std::string text(40, 'a');
      text.replace(at, 1, special);
      INFO(at << " " << static_cast<int>(static_cast<unsigned char>(special[0])));
      for (const auto handler : kHandlers) CHECK(difference(Json(text), handler) == "");
    }
  }
  // Invalid UTF-8 in a key as well as in a value.
  Json keyed = Json::object();
  keyed[std::string("bad \xff key")] = 1;
  for (const auto handler : kHandlers) CHECK(difference(keyed, handler) == "");
  // Appending keeps what is there.
  std::string out = "prefix:";
  gpuadmit::append_json(out, Json::parse(R"({"a":[1,2]})"));
  CHECK(out == R"(prefix:{"a":[1,2]})");
}

TEST_CASE("json_dump: every JSON file and YAML document of the repository and the corpus") {
  std::vector<Json> docs;
  const fs::path source(GPUADMIT_SOURCE_DIR);
  const fs::path corpus = fs::path(GPUADMIT_SHARED_DIR) / "corpus";
  for (const fs::path& root : {source / "tests", source / "bench", source / "examples", corpus}) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext == ".json") {
        std::ifstream in(entry.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        Json j = Json::parse(text.str(), nullptr, false);
        if (!j.is_discarded()) docs.push_back(std::move(j));
      } else if (ext == ".yaml" || ext == ".yml") {
        try {
          for (Json& doc : gpuadmit::testing::yaml_file_documents(entry.path().string())) {
            docs.push_back(std::move(doc));
          }
        } catch (const std::exception&) {
          // Not YAML this reader takes (the corpus's one invalid file).
        }
      }
    }
  }
  INFO("documents: " << docs.size());
  CHECK(docs.size() > 400);
  for (const Json& doc : docs) {
    const std::string d = difference(doc, Json::error_handler_t::strict);
    if (!d.empty()) FAIL(d);
  }
}
}  // namespace json_dump_test
