#pragma once
// Reading a YAML stream with yaml-cpp 0.7 so that it terminates, with bounded memory, on every
// input. yaml-cpp 0.7 can stop making progress: on `,a: 1` each `Parser::HandleNextDocument`
// call reports an empty document without consuming the `,`, so `YAML::LoadAll` appends empty
// documents until memory runs out (yaml-cpp issue #1040, fixed upstream by PR #1319 after 0.7;
// falcosecurity/falco #3281 is the same crash). So the stream is first scanned with an event
// handler that keeps nothing, counts documents and nodes against budgets and stops when a
// document starts where the previous one did; only a stream that scanned cleanly is loaded.
//
//   YamlScan scan = scan_yaml_documents(text, {.max_documents = 1000, .max_nodes = 200000});
//   if (scan.problem) ...;  // scan.problem->mark, ->message
//   YAML::Node doc = load_yaml_document(text, scan.first_content);
//
// Used by the policy loader (policies/loader.cc) and the manifest reader's yaml-cpp fallback
// (yaml/reader.cc).

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpuadmit::yaml {

struct YamlLimits {
  size_t max_documents = 1000;  // documents in the stream, empty ones included
  size_t max_nodes = 200000;    // nodes (scalars, collections, nulls, aliases) in all of them
};

struct YamlProblem {
  enum class Kind {
    kSyntax,            // yaml-cpp's own error, or a token it cannot read past
    kTooManyDocuments,  // more than max_documents
    kTooManyNodes,      // more than max_nodes
  };
  Kind kind = Kind::kSyntax;
  YAML::Mark mark;      // 0-based; where the problem is (the node or document past the budget)
  std::string message;  // kSyntax: yaml-cpp's message, or `did not find expected node content
                        // (found ",")` where yaml-cpp would loop; otherwise empty
};

struct YamlScan {
  size_t documents = 0;          // documents read, empty ones included
  size_t content_documents = 0;  // documents that are not empty (a lone null)
  size_t first_content = 0;      // index of the first of them
  YAML::Mark second_content;     // its top node's mark for the second of them (else null)
  size_t nodes = 0;
  std::optional<YamlProblem> problem;
};

// Reads the whole stream with yaml-cpp's event parser, keeping no nodes. Time is linear in the
// input and bounded by the budgets; memory is yaml-cpp's scanner state only.
YamlScan scan_yaml_documents(std::string_view text, const YamlLimits& limits);

// yaml-cpp 0.7 writes the escapes `\N` and `\_` of a double-quoted scalar as the single bytes
// 0x85 and 0xA0 (Latin-1), not as UTF-8 (U+0085, U+00A0), so a scalar read from valid UTF-8 can
// come back invalid (found by fuzz/yaml_reader_fuzz.cc: nlohmann's dump then throws). This
// re-encodes such lone bytes; everything else is left as it is.
std::string utf8_from_yaml_cpp(std::string scalar);

// The document at `index` (0-based, empty documents counted) of a stream that
// scan_yaml_documents read without a problem, as yaml-cpp's node tree.
YAML::Node load_yaml_document(std::string_view text, size_t index);

}  // namespace gpuadmit::yaml
