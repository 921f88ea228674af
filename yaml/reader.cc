#include "yaml/reader.h"

#include <yaml-cpp/yaml.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "engine/json_parse.h"
#include "yaml/fast_parser.h"
#include "yaml/scalar.h"
#include "yaml/yaml_cpp_scan.h"

namespace gpuadmit::yaml {
namespace {

enum class Marker { kNone, kStart, kEnd };

Marker marker_kind(std::string_view line) {
  if (line.size() < 3) return Marker::kNone;
  const bool start = line.substr(0, 3) == "---";
  const bool end = line.substr(0, 3) == "...";
  if (!start && !end) return Marker::kNone;
  if (line.size() > 3 && !std::strchr(" \t\r\n", line[3])) return Marker::kNone;
  return start ? Marker::kStart : Marker::kEnd;
}

// `--- # comment` carries nothing; `--- {a: 1}` or `--- !tag` does.
bool marker_has_content(std::string_view line) {
  size_t i = 3;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i < line.size() && line[i] != '#' && line[i] != '\r' && line[i] != '\n';
}

// The offset of the first character that is not whitespace or part of a comment, or npos.
size_t first_content(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else if (c == '#') {
      const size_t nl = text.find('\n', i);
      if (nl == std::string_view::npos) return std::string_view::npos;
      i = nl + 1;
    } else {
      return i;
    }
  }
  return std::string_view::npos;
}

int line_of_offset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return static_cast<int>(
      std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

// A rough nesting estimate that keeps yaml-cpp's recursive parser away from input nested deeply
// enough to overflow the stack. Generous on purpose: the converter enforces kMaxDepth exactly.
bool nesting_estimate_exceeds(std::string_view text, int limit) {
  int flow = 0;
  std::vector<int> indents;
  size_t i = 0;
  while (i < text.size()) {
    // Line start: indentation and "- " prefixes.
    size_t j = i;
    while (j < text.size() && text[j] == ' ') ++j;
    const int indent = static_cast<int>(j - i);
    int dashes = 0;
    while (j + 1 < text.size() && text[j] == '-' && (text[j + 1] == ' ')) {
      ++dashes;
      j += 2;
      while (j < text.size() && text[j] == ' ') ++j;
    }
    const bool content = j < text.size() && text[j] != '\n' && text[j] != '\r' && text[j] != '#';
    if (content && flow == 0) {
      while (!indents.empty() && indents.back() >= indent) indents.pop_back();
      indents.push_back(indent);
      if (static_cast<int>(indents.size()) + dashes > limit) return true;
    }
    char quote = 0;
    for (; j < text.size() && text[j] != '\n'; ++j) {
      const char c = text[j];
      if (quote != 0) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#' && j > 0 && (text[j - 1] == ' ' || text[j - 1] == '\t')) {
        while (j < text.size() && text[j] != '\n') ++j;
        break;
      } else if (c == '[' || c == '{') {
        if (++flow > limit) return true;
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
      }
    }
    i = j + 1;
  }
  return false;
}

// The characters kubectl's YAML reader (go-yaml v2) accepts: valid UTF-8 of TAB, LF, CR and the
// printable characters (0x20-0x7E, NEL, 0xA0-0xD7FF, 0xE000-0xFFFD, 0x10000-0x10FFFF). One pass
// over the document: it stops at the first invalid UTF-8 and remembers the first character that
// is valid UTF-8 but not allowed in YAML (JSON text may hold DEL and C1 controls raw).
struct CharacterCheck {
  size_t invalid_utf8 = std::string_view::npos;   // offset of the first byte that is not UTF-8
  size_t not_printable = std::string_view::npos;  // offset of the first non-printable character
  uint32_t code_point = 0;                        // that character
};

// Eight bytes of printable ASCII or LF: no high bit, no DEL, and no byte below 0x20 but LF
// (lines are short: a word often holds one). Per-byte exact: with the high bits clear, adding to
// the low seven bits never carries into the next byte.
bool eight_plain_bytes(const unsigned char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  constexpr uint64_t kLow = 0x7f * kOnes;
  uint64_t w;
  std::memcpy(&w, p, 8);
  auto zero_bytes = [&](uint64_t x) { return ~(((x & kLow) + kLow) | x) & kHigh; };
  const uint64_t control = ~((w & kLow) + 0x60 * kOnes) & kHigh;  // bytes below 0x20
  const uint64_t lf = zero_bytes(w ^ (0x0a * kOnes));
  const uint64_t del = zero_bytes(w ^ kLow);
  return ((w & kHigh) | del | (control & ~lf)) == 0;
}

// Sixteen bytes at once, the same test as eight_plain_bytes (manifests are mostly such bytes).
// The signed compare also flags bytes with the high bit set, which eight_plain_bytes refuses too.
bool sixteen_plain_bytes(const unsigned char* p) {
#ifdef __SSE2__
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i control = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));  // and bytes >= 0x80
  const __m128i lf = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
  const __m128i del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
  return _mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(lf, control), del)) == 0;
#else
  return eight_plain_bytes(p) && eight_plain_bytes(p + 8);
#endif
}

// The code point of the UTF-8 sequence at p[i] (a byte >= 0x80) and its length; false when it
// is not valid UTF-8 (a stray or overlong byte, a surrogate, beyond U+10FFFF, cut short).
bool decode_utf8(const unsigned char* p, size_t i, size_t n, uint32_t& cp, size_t& length) {
  const unsigned char c = p[i];
  uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return false;
  }
  if (i + length > n) return false;
  for (size_t k = 1; k < length; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (p[i + k] & 0x3F);
  }
  return cp >= min && !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
}

bool yaml_printable(uint32_t cp) {
  return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
}

CharacterCheck check_characters(std::string_view text) {
  CharacterCheck check;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    if (i + 16 <= n && sixteen_plain_bytes(p + i)) {
      i += 16;
      continue;
    }
    if (i + 8 <= n && eight_plain_bytes(p + i)) {
      i += 8;
      continue;
    }
    uint32_t cp = p[i];
    size_t length = 1;
    if (cp >= 0x80 && !decode_utf8(p, i, n, cp, length)) {
      check.invalid_utf8 = i;
      return check;
    }
    if (!yaml_printable(cp) && check.not_printable == std::string_view::npos) {
      check.not_printable = i;
      check.code_point = cp;
    }
    i += length;
  }
  return check;
}

// A character problem at `offset`: its file line and (character) column.
ParseIssue character_issue(std::string_view text, int first_line, size_t offset,
                           std::string message) {
  const size_t line_start = offset == 0 ? 0 : text.rfind('\n', offset - 1) + 1;
  int column = 1;
  for (size_t k = line_start; k < offset; ++k) {
    column += (static_cast<unsigned char>(text[k]) & 0xC0) != 0x80;
  }
  return ParseIssue{first_line + line_of_offset(text, offset), column, std::move(message)};
}

std::string hex(uint32_t value, int digits) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out(static_cast<size_t>(digits), '0');
  for (int k = digits - 1; k >= 0; --k, value >>= 4) out[static_cast<size_t>(k)] = kHex[value & 15];
  return out;
}

ParseIssue invalid_utf8_issue(std::string_view text, int first_line, size_t offset) {
  return character_issue(
      text, first_line, offset,
      "invalid UTF-8 (byte 0x" + hex(static_cast<unsigned char>(text[offset]), 2) +
          "); kubectl reads manifests as UTF-8 and rejects this file: save it as UTF-8");
}

ParseIssue not_printable_issue(std::string_view text, int first_line, const CharacterCheck& c) {
  return character_issue(text, first_line, c.not_printable,
                         "control character U+" + hex(c.code_point, 4) +
                             ", which YAML does not allow (kubectl rejects the file); remove it, "
                             "or write it as an escape in a double-quoted string");
}

struct LimitExceeded {
  std::string message;
  int line;
};

// yaml-cpp node → Json with go-yaml v2 scalar typing, merge keys, last-wins duplicates and the
// expansion limits (aliases share nodes in yaml-cpp but expand here).
class YamlCppConverter {
 public:
  explicit YamlCppConverter(std::vector<DuplicateKey>* duplicates) : duplicates_(duplicates) {}

  void convert(const YAML::Node& node, Json& out, int depth) {
    if (depth > kMaxDepth) {
      throw LimitExceeded{"nested deeper than " + std::to_string(kMaxDepth) + " levels",
                          node.Mark().line};
    }
    if (++nodes_ > kMaxExpandedNodes) {
      throw LimitExceeded{"expands to more than " + std::to_string(kMaxExpandedNodes) +
                              " nodes (aliases); refusing to expand it (billion laughs)",
                          node.Mark().line};
    }
    switch (node.Type()) {
      case YAML::NodeType::Map:
        convert_map(node, out, depth);
        return;
      case YAML::NodeType::Sequence: {
        out = empty_array();
        for (const YAML::Node& item : node) {
          convert(item, out.emplace_back(), depth + 1);
        }
        return;
      }
      case YAML::NodeType::Scalar:
        out = scalar(node);
        return;
      default:
        out = nullptr;
        return;
    }
  }

 private:
  Json scalar(const YAML::Node& node) {
    const std::string s = utf8_from_yaml_cpp(node.Scalar());
    bytes_ += s.size();
    if (bytes_ > kMaxDocumentBytes) {
      throw LimitExceeded{"expands to more than 64 MiB of text (aliases); refusing to expand it",
                          node.Mark().line};
    }
    const std::string& tag = node.Tag();
    if (tag == "?" || tag.empty()) return resolve_plain_scalar(s);
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return s;
    Json resolved = resolve_plain_scalar(s);
    if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
        tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
      return resolved;
    }
    return resolved;  // other tags: typed by content, as untagged
  }

  std::string key_of(const YAML::Node& key) {
    if (!key.IsScalar()) {
      throw LimitExceeded{
          "a mapping key that is not a scalar (`? [a, b]`); Kubernetes objects "
          "only have string keys",
          key.Mark().line};
    }
    const std::string& tag = key.Tag();
    if (tag == "?" || tag.empty()) {
      std::optional<std::string> out = resolve_plain_key(utf8_from_yaml_cpp(key.Scalar()));
      if (!out) {
        throw LimitExceeded{
            "mapping key \"" + key.Scalar() + "\" is not a string, number or boolean; quote it",
            key.Mark().line};
      }
      return std::move(*out);
    }
    return utf8_from_yaml_cpp(key.Scalar());
  }

  void convert_map(const YAML::Node& node, Json& out, int depth) {
    out = empty_object();
    auto& object = out.get_ref<Json::object_t&>();
    std::vector<YAML::Node> merge_storage;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (key.IsScalar() && key.Tag() == "?" && key.Scalar() == "<<") {
        merge_storage.push_back(it->second);
        continue;
      }
      std::string name = key_of(key);
      auto [slot, inserted] = object.emplace(name, nullptr);
      if (!inserted && duplicates_ != nullptr) duplicates_->push_back({name, key.Mark().line});
      convert(it->second, slot->second, depth + 1);
    }
    // Merge keys (YAML 1.1, as go-yaml v2): keys written in the map win over merged ones; of
    // several merged maps the first wins.
    for (const YAML::Node& merge : merge_storage) {
      std::vector<YAML::Node> sources;
      if (merge.IsMap()) {
        sources.push_back(merge);
      } else if (merge.IsSequence()) {
        for (const YAML::Node& s : merge) sources.push_back(s);
      }
      for (const YAML::Node& source : sources) {
        if (!source.IsMap()) {
          throw LimitExceeded{"a merge key (<<) whose value is not a map", merge.Mark().line};
        }
        for (auto it = source.begin(); it != source.end(); ++it) {
          std::string name = key_of(it->first);
          if (object.find(name) != object.end()) continue;
          convert(it->second, object.emplace(name, nullptr).first->second, depth + 1);
        }
      }
    }
  }

  std::vector<DuplicateKey>* duplicates_;
  size_t nodes_ = 0;
  size_t bytes_ = 0;
};

void add_duplicate_warnings(const std::vector<DuplicateKey>& duplicates, int first_line,
                            ParsedDocument& doc) {
  for (const DuplicateKey& d : duplicates) {
    doc.warnings.push_back(
        {first_line + d.line, 0,
         "duplicate key \"" + d.key +
             "\": the last value is used, as kubectl's YAML decoder does, but the API server's "
             "strict field validation rejects duplicate fields; remove one of them"});
  }
}

ParseIssue scan_issue(const YamlProblem& problem, int base) {
  const int line = base + std::max(0, problem.mark.line);
  switch (problem.kind) {
    case YamlProblem::Kind::kTooManyDocuments:
      return ParseIssue{line, 0, "more than 16 YAML documents where one was expected"};
    case YamlProblem::Kind::kTooManyNodes:
      return ParseIssue{line, 0,
                        "more than " + std::to_string(kMaxExpandedNodes) +
                            " YAML nodes; no Kubernetes object is that large"};
    case YamlProblem::Kind::kSyntax:
      break;
  }
  return ParseIssue{line, problem.mark.column + 1, problem.message};
}

void parse_with_yaml_cpp(const SourceDocument& source, ParsedDocument& doc) {
  doc.parser = Parser::kYamlCpp;
  const int base = source.first_line;
  if (nesting_estimate_exceeds(source.text, 10 * kMaxDepth)) {
    doc.error = ParseIssue{
        base, 0,
        "nested deeper than " + std::to_string(kMaxDepth) + " levels; no Kubernetes object is"};
    return;
  }
  // Scanned before it is loaded: yaml-cpp 0.7 can stop making progress (yaml/yaml_cpp_scan.h),
  // and YAML::Load would then read an empty document where the text holds a syntax error.
  const YamlScan scan = scan_yaml_documents(source.text, {16, kMaxExpandedNodes});
  if (scan.problem) {
    doc.value = nullptr;
    doc.error = scan_issue(*scan.problem, base);
    return;
  }
  if (scan.content_documents > 1) {
    doc.value = nullptr;
    const YAML::Mark& second = scan.second_content;
    doc.error = ParseIssue{base + std::max(0, second.line), second.column + 1,
                           "a second document without a `---` line before it"};
    return;
  }
  try {
    YAML::Node node = load_yaml_document(source.text, scan.first_content);
    if (!node.IsDefined() || node.IsNull()) {
      doc.value = nullptr;
      return;
    }
    std::vector<DuplicateKey> duplicates;
    YamlCppConverter converter(&duplicates);
    converter.convert(node, doc.value, 0);
    add_duplicate_warnings(duplicates, base, doc);
  } catch (const YAML::Exception& e) {
    doc.value = nullptr;
    doc.error = ParseIssue{base + std::max(0, e.mark.line), e.mark.column + 1, e.msg};
  } catch (const LimitExceeded& e) {
    doc.value = nullptr;
    doc.error = ParseIssue{base + std::max(0, e.line), 0, e.message};
  } catch (const std::exception& e) {
    doc.value = nullptr;
    doc.error = ParseIssue{base, 0, e.what()};
  }
}

// Walks a yaml-cpp tree along `tokens`; the 0-based line of the deepest node found, or -1.
// Nodes are rebound with reset(): yaml-cpp's Node::operator= would assign into the tree.
int yaml_cpp_locate(const YAML::Node& root, const std::vector<std::string>& tokens) {
  int line = -1;
  YAML::Node node(root);
  for (const std::string& token : tokens) {
    const YAML::Node& current = node;
    YAML::Node next;
    bool found = false;
    if (current.IsMap()) {
      for (auto it = current.begin(); it != current.end(); ++it) {
        if (it->first.IsScalar() && it->first.Scalar() == token) {
          line = it->first.Mark().line;
          next.reset(it->second);
          found = true;
        }
      }
    } else if (current.IsSequence() && !token.empty() &&
               token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10) {
      const size_t index = std::stoul(token);
      if (index < current.size()) {
        next.reset(current[index]);
        line = next.Mark().line;
        found = true;
      }
    }
    if (!found) break;
    node.reset(next);
  }
  return line;
}

}  // namespace

bool DocumentStream::next_line(std::string_view& line) {
  if (from_text_) {
    if (pos_ >= text_.size()) return false;
    const size_t nl = text_.find('\n', pos_);
    const size_t end = nl == std::string_view::npos ? text_.size() : nl + 1;
    line = text_.substr(pos_, end - pos_);
    pos_ = end;
    return true;
  }
  while (true) {
    const size_t nl = buffer_.find('\n', pos_);
    if (nl != std::string::npos) {
      line = std::string_view(buffer_).substr(pos_, nl + 1 - pos_);
      pos_ = nl + 1;
      return true;
    }
    // A line longer than any document may be: hand it out in pieces (the document is then
    // too large anyway), so that memory stays bounded.
    if (eof_ || buffer_.size() - pos_ > kMaxDocumentBytes) {
      if (pos_ >= buffer_.size()) return false;
      line = std::string_view(buffer_).substr(pos_);
      pos_ = buffer_.size();
      return true;
    }
    refill();
  }
}

// Out of line: its 64 KiB buffer would otherwise be allocated (and, with stack clash
// protection, probed page by page) on every next_line call.
void DocumentStream::refill() {
  buffer_.erase(0, pos_);
  pos_ = 0;
  char chunk[1 << 16];
  errno = 0;
  const size_t n = std::fread(chunk, 1, sizeof chunk, file_);
  if (n == 0) {
    eof_ = true;
    if (std::ferror(file_)) {
      read_error_ = true;
      read_errno_ = errno;
    }
  }
  buffer_.append(chunk, n);
}

bool DocumentStream::next(SourceDocument& out) {
  if (done_) return false;
  out.text.clear();
  out.too_large = false;
  out.starts_with_marker = false;
  out.first_line = line_ + 1;
  if (has_carry_) {
    out.text = std::move(carry_);
    out.first_line = carry_line_;
    out.starts_with_marker = true;
    has_carry_ = false;
  }
  if (from_text_) return next_from_text(out);
  std::string_view line;
  while (next_line(line)) {
    ++line_;
    const Marker marker = marker_kind(line);
    if (marker != Marker::kNone) {
      if (marker == Marker::kStart && marker_has_content(line)) {
        carry_.assign(line);
        carry_line_ = line_;
        has_carry_ = true;
      }
      return true;
    }
    if (out.too_large) continue;
    if (out.text.size() + line.size() > kMaxDocumentBytes) {
      out.too_large = true;
      std::string().swap(out.text);
      continue;
    }
    out.text.append(line);
  }
  done_ = true;
  return true;
}

// The text is all here: the document's lines are one span of it, copied once (not line by line).
bool DocumentStream::next_from_text(SourceDocument& out) {
  const size_t begin = pos_;
  size_t end = pos_;  // after the document's last line
  bool marker_found = false;
  while (pos_ < text_.size()) {
    const size_t nl = text_.find('\n', pos_);
    const size_t line_end = nl == std::string_view::npos ? text_.size() : nl + 1;
    const std::string_view line = text_.substr(pos_, line_end - pos_);
    pos_ = line_end;
    ++line_;
    const Marker marker = line[0] == '-' || line[0] == '.' ? marker_kind(line) : Marker::kNone;
    if (marker != Marker::kNone) {
      if (marker == Marker::kStart && marker_has_content(line)) {
        carry_.assign(line);
        carry_line_ = line_;
        has_carry_ = true;
      }
      marker_found = true;
      break;
    }
    end = line_end;
  }
  if (!marker_found) done_ = true;
  if (out.text.size() + (end - begin) > kMaxDocumentBytes) {
    out.too_large = true;
    std::string().swap(out.text);
  } else {
    out.text.append(text_.substr(begin, end - begin));
  }
  return true;
}

namespace {

// A document that starts with `{` or `[`, read as JSON. True when that settled it (a value, or
// an error in a .json file); false when it is to be read as YAML (flow YAML that is not JSON).
bool parse_as_json(const SourceDocument& source, std::string_view text, bool json_file,
                   ParsedDocument& doc) {
  if (json_depth_exceeds(text, kMaxDepth)) {
    doc.error = ParseIssue{
        doc.line, 0,
        "nested deeper than " + std::to_string(kMaxDepth) + " levels; no Kubernetes object is"};
    return true;
  }
  // The project's JSON reader (engine/json_parse.h) reads the document; nlohmann's parser runs
  // only on text it refuses (the two accept the same: tests/engine/json_parse_test.cpp), for the
  // error's words and position.
  if (parse_json(text, doc.value)) {
    doc.format = DocumentFormat::kJson;
    doc.parser = Parser::kJson;
    return true;
  }
  try {
    doc.value = Json::parse(text);
    doc.format = DocumentFormat::kJson;
    doc.parser = Parser::kJson;
    return true;
  } catch (const Json::parse_error& e) {
    doc.value = nullptr;
    if (!json_file) return false;  // flow YAML that is not JSON: read as YAML
    std::string message = e.what();
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) message = message.substr(colon + 2);
    const size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    const size_t line_start = text.rfind('\n', byte);
    const int column =
        static_cast<int>(line_start == std::string_view::npos ? byte + 1 : byte - line_start);
    doc.error = ParseIssue{source.first_line + line_of_offset(text, byte), column,
                           "invalid JSON: " + message};
    return true;
  } catch (const Json::out_of_range& e) {
    // A number beyond a double (`1e999`; found by fuzz/yaml_reader_fuzz.cc): Go's encoding/json
    // refuses it as well. As YAML it is a string (go-yaml v2 resolves only what
    // strconv.ParseFloat accepts).
    doc.value = nullptr;
    if (!json_file) return false;
    std::string message = e.what();
    const size_t colon = message.find("] ");
    if (colon != std::string::npos) message = message.substr(colon + 2);
    doc.error = ParseIssue{doc.line, 0, "invalid JSON: " + message};
    return true;
  }
}

// Block YAML: the fast path, and yaml-cpp for what it does not fully understand.
void parse_as_yaml(const SourceDocument& source, std::string_view text, ParsedDocument& doc) {
  std::vector<DuplicateKey> duplicates;
  const FastResult fast = fast_parse_yaml(text, doc.value, &duplicates, nullptr);
  if (fast.status == FastStatus::kOk) {
    add_duplicate_warnings(duplicates, source.first_line, doc);
    return;
  }
  doc.value = nullptr;
  if (fast.status == FastStatus::kTooDeep) {
    doc.error = ParseIssue{
        source.first_line + fast.error_line, 0,
        "nested deeper than " + std::to_string(kMaxDepth) + " levels; no Kubernetes object is"};
    return;
  }
  parse_with_yaml_cpp(source, doc);
  doc.empty = doc.value.is_null() && !doc.error;
}

}  // namespace

ParsedDocument parse_document(const SourceDocument& source, bool json_file) {
  ParsedDocument doc;
  doc.line = source.first_line;
  if (source.too_large) {
    doc.empty = false;
    doc.error = ParseIssue{source.first_line, 0,
                           "document larger than 64 MiB; split it into smaller documents"};
    return doc;
  }
  const std::string_view text = source.text;
  const size_t start = first_content(text);
  if (start == std::string_view::npos) return doc;  // empty
  doc.empty = false;
  doc.line = source.first_line + line_of_offset(text, start);
  const CharacterCheck characters = check_characters(text);
  if (characters.invalid_utf8 != std::string_view::npos) {
    doc.error = invalid_utf8_issue(text, source.first_line, characters.invalid_utf8);
    return doc;
  }
  // JSON may carry DEL and C1 controls raw; YAML (every path below but nlohmann's) may not.
  const bool yaml_clean = characters.not_printable == std::string_view::npos;
  if ((text[start] == '{' || text[start] == '[') && !source.starts_with_marker &&
      parse_as_json(source, text, json_file, doc)) {
    return doc;
  }
  if (!yaml_clean) {
    doc.error = not_printable_issue(text, source.first_line, characters);
    return doc;
  }
  if (source.starts_with_marker) {  // only yaml-cpp reads what a `---` line carries
    parse_with_yaml_cpp(source, doc);
    doc.empty = doc.value.is_null() && !doc.error;
    return doc;
  }
  parse_as_yaml(source, text, doc);
  return doc;
}

ParsedDocument parse_document_yaml_cpp(const SourceDocument& source) {
  ParsedDocument doc;
  doc.line = source.first_line;
  const size_t start = first_content(source.text);
  if (start == std::string_view::npos) return doc;
  doc.empty = false;
  doc.line = source.first_line + line_of_offset(source.text, start);
  parse_with_yaml_cpp(source, doc);
  doc.empty = doc.value.is_null() && !doc.error;
  return doc;
}

std::vector<std::string> split_dotted_path(std::string_view path) {
  std::vector<std::string> tokens;
  size_t i = 0;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) tokens.push_back(std::move(current));
    current.clear();
  };
  while (i < path.size()) {
    const char c = path[i];
    if (c == '.') {
      flush();
      ++i;
    } else if (c == '[') {
      flush();
      if (i + 1 < path.size() && path[i + 1] == '"') {
        const size_t close = path.find("\"]", i + 2);
        if (close == std::string_view::npos) break;
        tokens.emplace_back(path.substr(i + 2, close - i - 2));
        i = close + 2;
      } else {
        const size_t close = path.find(']', i + 1);
        if (close == std::string_view::npos) break;
        tokens.emplace_back(path.substr(i + 1, close - i - 1));
        i = close + 1;
      }
    } else {
      current += c;
      ++i;
    }
  }
  flush();
  return tokens;
}

std::vector<int> locate_paths(const SourceDocument& source, const ParsedDocument& doc,
                              const std::vector<std::string>& dotted_paths) {
  std::vector<int> result(dotted_paths.size(), 0);
  if (doc.error || doc.empty || dotted_paths.empty() || source.too_large) return result;
  Locator locator;
  for (const std::string& path : dotted_paths) locator.targets.push_back(split_dotted_path(path));
  locator.matched.assign(locator.targets.size(), 0);
  locator.lines.assign(locator.targets.size(), -1);
  bool located = false;
  if (doc.parser != Parser::kYamlCpp) {
    Json scratch;
    located = fast_parse_yaml(source.text, scratch, nullptr, &locator).status == FastStatus::kOk;
  }
  if (!located) {
    try {
      const YAML::Node root = YAML::Load(source.text);
      for (size_t t = 0; t < locator.targets.size(); ++t) {
        locator.lines[t] = yaml_cpp_locate(root, locator.targets[t]);
      }
      located = true;
    } catch (const std::exception&) {
      located = false;
    }
  }
  if (!located) return result;
  for (size_t t = 0; t < result.size(); ++t) {
    if (locator.lines[t] >= 0) result[t] = source.first_line + locator.lines[t];
  }
  return result;
}

}  // namespace gpuadmit::yaml
