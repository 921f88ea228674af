#pragma once
// Manifest reading: a byte stream split into documents without reading it whole, and each
// document turned into JSON with its line numbers, as kubectl would turn it into the JSON the
// API server receives.
//
//   DocumentStream stream(file);
//   SourceDocument source;
//   while (stream.next(source)) {
//     ParsedDocument doc = parse_document(source, /*json_file=*/false);
//     if (doc.error) ...;  // doc.error->line is a line of the file
//   }
//
// Parsing takes a fast path for the block YAML that manifests are written in (and nlohmann for
// JSON) and falls back to yaml-cpp for anything the fast path does not fully understand (anchors,
// aliases, tags, complex keys, multi-line plain scalars, ...). Both apply the same scalar typing
// (yaml/scalar.h), last-wins duplicate keys and the same limits.

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"

namespace gpuadmit::yaml {

// Limits that keep memory and time bounded on hostile input (SPEC §9): a document larger than
// kMaxDocumentBytes, nested deeper than kMaxDepth, or whose aliases expand to more than
// kMaxExpandedNodes nodes (billion laughs) is a PARSE error.
inline constexpr size_t kMaxDocumentBytes = 64u << 20;
inline constexpr int kMaxDepth = 100;
inline constexpr size_t kMaxExpandedNodes = 1'000'000;

// One document of a stream, as read.
struct SourceDocument {
  std::string text;    // the document's lines, line ends as read (CR LF kept)
  int first_line = 1;  // the file line of text's first line
  // The text starts with its `---` marker line because the marker carries content
  // (`--- {a: 1}`, `--- !tag`): only yaml-cpp reads such a document.
  bool starts_with_marker = false;
  bool too_large = false;  // over kMaxDocumentBytes: text was dropped
};

// Splits a stream at `---` / `...` lines (YAML forbids them inside any scalar at column 0, so
// this is exact). Memory: one document at a time.
class DocumentStream {
 public:
  explicit DocumentStream(std::FILE* file) : file_(file) {}
  explicit DocumentStream(std::string_view text) : text_(text), from_text_(true) {}
  // The next document, possibly empty (comments only). False at the end of the stream.
  bool next(SourceDocument& out);
  // True when reading the file failed (not at end of file); read_errno() is why.
  bool read_error() const { return read_error_; }
  int read_errno() const { return read_errno_; }

 private:
  bool next_from_text(SourceDocument& out);  // next() of a stream of text in memory
  bool next_line(std::string_view& line);    // the next line including its '\n' (if any)
  [[gnu::noinline]] void refill();           // reads the next chunk of the file into buffer_
  std::FILE* file_ = nullptr;
  std::string_view text_;
  bool from_text_ = false;
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
  bool read_error_ = false;
  int read_errno_ = 0;
  bool done_ = false;
  int line_ = 0;  // lines consumed so far
  // A `---` line with content belongs to the document it starts.
  std::string carry_;
  int carry_line_ = 0;
  bool has_carry_ = false;
};

struct ParseIssue {
  int line = 0;    // file line, 1-based
  int column = 0;  // 1-based, 0 when unknown
  std::string message;
};

enum class DocumentFormat { kYaml, kJson };
enum class Parser { kFast, kJson, kYamlCpp };

struct ParsedDocument {
  Json value;                        // null when empty or on error
  bool empty = true;                 // nothing but comments and whitespace
  std::optional<ParseIssue> error;   // the document could not be read
  std::vector<ParseIssue> warnings;  // duplicate keys (last wins)
  DocumentFormat format = DocumentFormat::kYaml;
  Parser parser = Parser::kFast;
  int line = 0;  // file line of the document's first content line
};

// Parses one document. `json_file`: the file is *.json, so a document that is not valid JSON is
// reported with nlohmann's message rather than read as YAML.
ParsedDocument parse_document(const SourceDocument& source, bool json_file);

// The fallback path alone (yaml-cpp), for tests that check the fast path against it.
ParsedDocument parse_document_yaml_cpp(const SourceDocument& source);

// The file line of each dotted path ("spec.containers[0].resources.limits[\"nvidia.com/gpu\"]")
// in the document: the deepest node of the path that exists in the text, else 0.
std::vector<int> locate_paths(const SourceDocument& source, const ParsedDocument& doc,
                              const std::vector<std::string>& dotted_paths);

// "spec.x[0][\"a.b\"]" → {"spec", "x", "0", "a.b"}.
std::vector<std::string> split_dotted_path(std::string_view path);

}  // namespace gpuadmit::yaml
