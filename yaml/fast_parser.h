#pragma once
// The reader's fast path for the YAML subset manifests are written in: block maps and sequences,
// plain/single/double-quoted scalars on one line, `|`/`>` block scalars, flow `[]`/`{}` (so JSON
// too), comments, CRLF. Everything else (anchors, aliases, tags, `?` keys, merge keys, multi-line
// plain or quoted scalars, tabs in indentation, anything malformed) is kUnsupported, and the
// caller hands the document to yaml-cpp, which either reads it or reports the error. So the fast
// path never has to get an error message right; it only has to never accept what it does not
// understand. Internal to yaml/.

#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"

namespace gpuadmit::yaml {

// Records the line of the deepest node of each target path met while parsing.
struct Locator {
  std::vector<std::vector<std::string>> targets;
  std::vector<size_t> matched;  // tokens of each target matched so far
  std::vector<int> lines;       // 0-based line in the text of the deepest match, -1 if none
};

struct DuplicateKey {
  std::string key;
  int line = 0;  // 0-based line in the text of the repeated key
};

enum class FastStatus { kOk, kUnsupported, kTooDeep };

struct FastResult {
  FastStatus status = FastStatus::kOk;
  bool empty = true;   // the text holds no node (comments and whitespace only)
  int first_line = 0;  // 0-based line of the first content line
  int error_line = 0;  // kTooDeep: where the limit was passed
};

// Parses one document's text (no `---` markers in it) into `out`.
FastResult fast_parse_yaml(std::string_view text, Json& out, std::vector<DuplicateKey>* duplicates,
                           Locator* locator);

}  // namespace gpuadmit::yaml
