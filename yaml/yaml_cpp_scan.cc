// See yaml_cpp_scan.h: why yaml-cpp 0.7 is read through a scan first.

#include "yaml/yaml_cpp_scan.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

namespace gpuadmit::yaml {
namespace {

// Thrown out of yaml-cpp's parser by the handler when a budget is spent or the parser is stuck;
// the parser is discarded after it.
struct StopScan {
  YamlProblem problem;
};

// The character at `pos` for a message: one UTF-8 sequence, quoted.
std::string quoted_char_at(std::string_view text, size_t pos) {
  if (pos >= text.size()) return "the end of the input";
  size_t end = pos + 1;
  while (end < text.size() && end - pos < 4 &&
         (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    ++end;
  }
  std::string c(text.substr(pos, end - pos));
  if (c == "\"") c = "\\\"";
  if (c == "\t") c = "\\t";
  return "\"" + c + "\"";
}

// Counts documents and nodes; keeps nothing else.
class ScanHandler : public YAML::EventHandler {
 public:
  ScanHandler(std::string_view text, const YamlLimits& limits, YamlScan& scan)
      : text_(text), limits_(limits), scan_(scan) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // A document that consumed nothing leaves the parser where it was: the next one would start
    // at the same token, forever (yaml-cpp #1040 on a stray `,`, `]` or `}`).
    if (scan_.documents > 0 && mark.pos == last_start_.pos) {
      throw StopScan{{YamlProblem::Kind::kSyntax, mark,
                      "did not find expected node content (found " +
                          quoted_char_at(text_, static_cast<size_t>(mark.pos)) + ")"}};
    }
    if (scan_.documents >= limits_.max_documents) {
      throw StopScan{{YamlProblem::Kind::kTooManyDocuments, mark, ""}};
    }
    ++scan_.documents;
    last_start_ = mark;
    depth_ = 0;
    top_seen_ = false;
    top_null_ = false;
  }
  void OnDocumentEnd() override {
    if (top_null_ || !top_seen_) return;
    if (scan_.content_documents == 0) scan_.first_content = scan_.documents - 1;
    if (scan_.content_documents == 1) scan_.second_content = top_mark_;
    ++scan_.content_documents;
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark, false);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark, false);
    ++depth_;
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark, false);
    ++depth_;
  }
  void OnMapEnd() override { --depth_; }

 private:
  void node(const YAML::Mark& mark, bool null) {
    if (scan_.nodes >= limits_.max_nodes) {
      throw StopScan{{YamlProblem::Kind::kTooManyNodes, mark, ""}};
    }
    ++scan_.nodes;
    if (depth_ == 0 && !top_seen_) {
      top_seen_ = true;
      top_null_ = null;
      top_mark_ = mark;
    }
  }

  std::string_view text_;
  const YamlLimits& limits_;
  YamlScan& scan_;
  YAML::Mark last_start_;
  YAML::Mark top_mark_;
  int depth_ = 0;
  bool top_seen_ = false;
  bool top_null_ = false;
};

}  // namespace

YamlScan scan_yaml_documents(std::string_view text, const YamlLimits& limits) {
  YamlScan scan;
  scan.second_content = YAML::Mark::null_mark();
  std::istringstream in{std::string(text)};
  ScanHandler handler(text, limits, scan);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(handler)) {
    }
  } catch (const StopScan& stop) {
    scan.problem = stop.problem;
  } catch (const YAML::Exception& e) {
    scan.problem = YamlProblem{YamlProblem::Kind::kSyntax, e.mark, e.msg};
  }
  return scan;
}

std::string utf8_from_yaml_cpp(std::string scalar) {
  const bool ascii = std::all_of(scalar.begin(), scalar.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return scalar;
  std::string out;
  size_t i = 0;
  while (i < scalar.size()) {
    const auto c = static_cast<unsigned char>(scalar[i]);
    const size_t length = c < 0x80         ? 1
                          : (c >> 5) == 6  ? 2
                          : (c >> 4) == 14 ? 3
                          : (c >> 3) == 30 ? 4
                                           : 0;
    bool valid = length > 0 && i + length <= scalar.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(scalar[i + k]) & 0xC0) == 0x80;
    }
    if (valid) {
      out.append(scalar, i, length);
      i += length;
      continue;
    }
    if (c == 0x85 || c == 0xA0) {  // yaml-cpp's \N and \_
      out += static_cast<char>(0xC2);
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);  // not from yaml-cpp's escapes: left alone
    }
    ++i;
  }
  return out;
}

YAML::Node load_yaml_document(std::string_view text, size_t index) {
  if (index == 0) return YAML::Load(std::string(text));  // reads the first document only
  // Bounded: the scan counted at most max_documents documents and max_nodes nodes in them.
  std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
  return index < documents.size() ? documents[index] : YAML::Node();
}

}  // namespace gpuadmit::yaml
