// Text yaml-cpp 0.7 cannot read past (issue 11): lint reports it as PARSE with its line (exit
// 2), never as an empty file; a file of comments and whitespace is 0 documents with a note.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/json.h"
#include "tests/support/process.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {
namespace unreadable_test {
namespace {

std::string gpuadmit() { return std::string("'") + GPUADMIT_BINARY + "'"; }

// Every document of `text`, through the reader lint uses (fast path, then yaml-cpp).
std::vector<yaml::ParsedDocument> parse_all(std::string_view text) {
  yaml::DocumentStream stream(text);
  std::vector<yaml::ParsedDocument> out;
  yaml::SourceDocument d;
  while (stream.next(d)) out.push_back(yaml::parse_document(d, false));
  return out;
}

struct Unreadable {
  const char* text;
  int line;
  int column;
  const char* message;
};

// yaml-cpp 0.7 reads each of these as an empty document without consuming anything
// (yaml-cpp #1040): YAML::Load returned null, LoadAll looped forever.
const std::vector<Unreadable> kUnreadable = {
    {",a: 1", 1, 1, "did not find expected node content (found \",\")"},
    {"- a\n, b\n", 2, 1, "did not find expected node content (found \",\")"},
    {"a: 1\n]\n", 2, 1, "illegal flow end"},
    {"}", 1, 1, "illegal flow end"},
    {"kind: Pod\n---\n,a: 1\n", 3, 1, "did not find expected node content (found \",\")"},
};

TEST_CASE("text yaml-cpp cannot read past is an error with its line, on both paths",
          "[lint][reader][issue11]") {
  for (const Unreadable& c : kUnreadable) {
    INFO(c.text);
    std::vector<yaml::ParsedDocument> docs = parse_all(c.text);
    REQUIRE_FALSE(docs.empty());
    const yaml::ParsedDocument& last = docs.back();
    CHECK_FALSE(last.empty);
    REQUIRE(last.error);
    CHECK(last.error->line == c.line);
    CHECK(last.error->column == c.column);
    CHECK(last.error->message == c.message);

    // The fallback alone agrees (the fast path hands such text to it).
    yaml::DocumentStream stream(c.text);
    yaml::SourceDocument source;
    while (stream.next(source)) {
    }
    yaml::ParsedDocument fallback = yaml::parse_document_yaml_cpp(source);
    REQUIRE(fallback.error);
    CHECK(fallback.error->line == c.line);
    CHECK(fallback.error->message == c.message);
  }
}

TEST_CASE("a JSON number beyond a double is a PARSE error in a .json file, a string in YAML",
          "[lint][reader]") {
  // Found by fuzz/yaml_reader_fuzz.cc: nlohmann's out_of_range escaped and ended the lint run.
  yaml::DocumentStream stream(std::string_view("[[1e738]]\n"));
  yaml::SourceDocument source;
  REQUIRE(stream.next(source));
  const yaml::ParsedDocument json = yaml::parse_document(source, true);
  REQUIRE(json.error);
  CHECK(json.error->line == 1);
  CHECK(json.error->message == "invalid JSON: number overflow parsing '1e738'");
  const yaml::ParsedDocument yaml = yaml::parse_document(source, false);
  REQUIRE_FALSE(yaml.error);
  CHECK(yaml.value == Json::parse(R"([["1e738"]])"));
}

TEST_CASE("yaml-cpp's NEL and NBSP escapes come out as UTF-8, as the fast path reads them",
          "[lint][reader]") {
  // Found by fuzz/yaml_reader_fuzz.cc: yaml-cpp 0.7 wrote them as the bytes 0x85 and 0xA0, and
  // dumping the value threw nlohmann's invalid-UTF-8 type_error.
  for (const char* text : {"a: &x \"\\_ \\N\"\n", "\"\\_{\"", "\"\\_\": \"\\_\"\n"}) {
    INFO(text);
    yaml::DocumentStream stream{std::string_view(text)};
    yaml::SourceDocument source;
    REQUIRE(stream.next(source));
    const yaml::ParsedDocument fallback = yaml::parse_document_yaml_cpp(source);
    REQUIRE_FALSE(fallback.error);
    const std::string dumped = fallback.value.dump();
    CHECK(dumped.find("\xC2\xA0") != std::string::npos);
    const yaml::ParsedDocument doc = yaml::parse_document(source, false);
    REQUIRE_FALSE(doc.error);
    CHECK(doc.value.dump() == dumped);
  }
}

TEST_CASE("lint: the 6-byte file `,a: 1` is PARSE at line 1, exit 2", "[lint][cli][issue11]") {
  const auto r =
      testing::run_command("timeout 20 " + gpuadmit() + " lint --output json -", ",a: 1");
  CHECK(r.exit_code == 2);
  const Json report = Json::parse(r.out);
  REQUIRE(report["findings"].size() == 1);
  const Json& f = report["findings"][0];
  CHECK(f["rule"] == "PARSE");
  CHECK(f["severity"] == "error");
  CHECK(f["line"] == 1);
  CHECK(f["message"] ==
        "cannot read this document: did not find expected node content (found \",\") (line 1, "
        "column 1); fix the syntax (the other documents are still linted)");
  CHECK(report["summary"]["documents"] == 1);

  const auto text = testing::run_command("timeout 20 " + gpuadmit() + " lint -", ",a: 1");
  CHECK(text.exit_code == 2);
  CHECK(text.out.find("<stdin>\n  1:  error  PARSE  cannot read this document: did not find "
                      "expected node content") != std::string::npos);
  CHECK(text.out.find("1 error in 1 document") != std::string::npos);
}

TEST_CASE("lint: comments and whitespace only are 0 documents with a note",
          "[lint][cli][issue11]") {
  for (const std::string input : {"# nothing here\n\n  # indented\n", "", "\n \n---\n# c\n...\n"}) {
    INFO(input);
    const auto r = testing::run_command("timeout 20 " + gpuadmit() + " lint -", input);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "0 deny, 0 warn, 0 errors in 0 documents (0 workloads) from 1 file\n");
    CHECK(r.err ==
          "gpuadmit lint: note: <stdin> holds no documents, only comments and whitespace\n");
  }
  // A file with a document gets no note.
  const auto r = testing::run_command("timeout 20 " + gpuadmit() + " lint -", "# c\n---\na: 1\n");
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
}

}  // namespace
}  // namespace unreadable_test
}  // namespace gpuadmit::lint
