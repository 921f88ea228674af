// The YAML reader (yaml/reader.h) on arbitrary bytes (docs/fuzzing.md): the document splitter, the
// fast YAML path and the yaml-cpp fallback all return (libFuzzer's -timeout and -rss_limit_mb bound
// them), never crash, and agree: a document the fast path reads, yaml-cpp reads as the same JSON
// (or rejects: it is stricter in places); a PARSE error's line is a line of the document; field
// lines are looked up without a crash.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "yaml/reader.h"

namespace {

using namespace gpuadmit::yaml;

int line_count(std::string_view text) {
  int lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

void check_issue(const ParseIssue& issue, const SourceDocument& source) {
  FUZZ_CHECK(!issue.message.empty(), "an error says what is wrong");
  FUZZ_CHECK(
      issue.line >= source.first_line && issue.line < source.first_line + line_count(source.text),
      "an error's line is a line of its document");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> paths = {"metadata.name", "spec.containers[0].resources",
                                          "spec.template.spec.containers[0].image"};
  DocumentStream stream(text);
  SourceDocument source;
  size_t documents = 0;
  while (stream.next(source)) {
    FUZZ_CHECK(++documents <= size + 1, "the splitter ends");
    for (bool json_file : {false, true}) {
      const ParsedDocument doc = parse_document(source, json_file);
      if (doc.error) check_issue(*doc.error, source);
      FUZZ_CHECK(!(doc.empty && doc.error), "an empty document has no error");
      locate_paths(source, doc, paths);
      if (json_file || doc.empty || doc.error || doc.parser != Parser::kFast) continue;
      // Both readers: the fast path's reading is yaml-cpp's.
      const ParsedDocument fallback = parse_document_yaml_cpp(source);
      if (fallback.error) {
        check_issue(*fallback.error, source);
        continue;  // yaml-cpp is stricter in places (tests/lint/yaml_reader_test.cpp)
      }
      FUZZ_CHECK(doc.value.dump() == fallback.value.dump(), "the fast path reads as yaml-cpp");
    }
    // The fallback alone, on every document (the fast path hands it only what it cannot read).
    const ParsedDocument fallback = parse_document_yaml_cpp(source);
    if (fallback.error) check_issue(*fallback.error, source);
  }
  return 0;
}
