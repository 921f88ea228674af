#include "yaml/fast_parser.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "yaml/reader.h"
#include "yaml/scalar.h"

namespace gpuadmit::yaml {
namespace {

// Thrown (rarely) to hand the document to yaml-cpp; exceptions cost nothing on the fast path.
struct Unsupported {};
struct TooDeep {
  int line;
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Keys that are plain strings whatever go-yaml v2 thinks: the first character rules out every
// non-string resolution (see resolve_plain_scalar).
// strchr(chars, c) != nullptr as a table lookup (the hot path tests every key and line start);
// like strchr, '\0' is a member.
struct CharSet {
  bool has[256] = {};
  constexpr explicit CharSet(std::string_view chars) {
    has[0] = true;
    for (char c : chars) has[static_cast<unsigned char>(c)] = true;
  }
  constexpr bool operator()(char c) const { return has[static_cast<unsigned char>(c)]; }
};
constexpr CharSet kNeedsResolution("~nNyYtTfFoO.+-0123456789");
constexpr CharSet kNotKeyStart("[]{},#&*!|>%@`?:");
constexpr CharSet kKeyScanStop(":#\n\r");  // and '\0', which the scan then steps over

// The first character at or after `q` (before `end`) that kKeyScanStop holds, else `end`: 16
// bytes a step where SSE2 is there ('\0' is no stop there; the scan steps over it anyway).
const char* next_key_scan_stop(const char* q, const char* end) {
#ifdef __SSE2__
  const __m128i colon = _mm_set1_epi8(':');
  const __m128i hash = _mm_set1_epi8('#');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  while (end - q >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i hit =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, colon), _mm_cmpeq_epi8(v, hash)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return q + __builtin_ctz(mask);
    q += 16;
  }
#endif
  while (q < end && !kKeyScanStop(*q)) ++q;
  return q;
}

bool key_needs_resolution(char c) { return kNeedsResolution(c); }

class FastParser {
 public:
  FastParser(std::string_view text, std::vector<DuplicateKey>* duplicates, Locator* locator)
      : p_(text.data()),
        end_(text.data() + text.size()),
        line_start_(text.data()),
        duplicates_(duplicates),
        locator_(locator) {
    if (locator_ != nullptr) done_.assign(locator_->targets.size(), false);
  }

  FastResult run(Json& out) {
    FastResult result;
    try {
      if (!advance_to_content()) {
        out = nullptr;
        return result;
      }
      result.empty = false;
      result.first_line = line_;
      if (*p_ == '|' || *p_ == '>') throw Unsupported{};
      parse_block_node(col(), out);
      if (!eof_) throw Unsupported{};
    } catch (const Unsupported&) {
      result.status = FastStatus::kUnsupported;
    } catch (const TooDeep& e) {
      result.status = FastStatus::kTooDeep;
      result.error_line = e.line;
    }
    return result;
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(FastParser* p) : parser(p) {
      if (++parser->depth_ > kMaxDepth) throw TooDeep{parser->line_};
    }
    ~DepthGuard() { --parser->depth_; }
    FastParser* parser;
  };

  int col() const { return static_cast<int>(p_ - line_start_); }
  bool blank_at(const char* q) const { return q == end_ || is_blank(*q); }
  bool at_eol() const { return p_ == end_ || *p_ == '\n' || *p_ == '\r'; }
  bool is_seq_entry() const { return *p_ == '-' && blank_at(p_ + 1); }

  void skip_inline_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
  }
  // The next '\n' at or after `from`, or end_.
  const char* find_newline(const char* from) const {
    if (from >= end_) return end_;
    const void* nl = std::memchr(from, '\n', static_cast<size_t>(end_ - from));
    return nl != nullptr ? static_cast<const char*>(nl) : end_;
  }
  void skip_to_eol() { p_ = find_newline(p_); }
  // At a line end: moves to the start of the next line. A lone CR is not a line end we accept.
  void consume_eol() {
    if (p_ == end_) return;
    if (*p_ == '\r') {
      ++p_;
      if (p_ == end_ || *p_ != '\n') throw Unsupported{};
    }
    ++p_;
    ++line_;
    line_start_ = p_;
  }
  // After a value: only spaces and a comment may follow on its line.
  void finish_line() {
    skip_inline_ws();
    if (p_ < end_ && *p_ == '#') {
      if (p_ > line_start_ && p_[-1] != ' ' && p_[-1] != '\t') throw Unsupported{};
      skip_to_eol();
    }
    if (!at_eol()) throw Unsupported{};
    consume_eol();
  }
  // From a line start: skips blank and comment lines; stops at the first content character.
  bool advance_to_content() {
    while (p_ < end_) {
      const char* q = p_;
      while (q < end_ && *q == ' ') ++q;
      if (q < end_ && *q == '\t') {
        const char* r = q;
        while (r < end_ && (*r == ' ' || *r == '\t')) ++r;
        if (r != end_ && *r != '\n' && *r != '\r' && *r != '#') throw Unsupported{};  // tab indent
        q = r;
      }
      p_ = q;
      if (q == end_) break;
      if (*q == '\n' || *q == '\r') {
        consume_eol();
        continue;
      }
      if (*q == '#') {
        skip_to_eol();
        consume_eol();
        continue;
      }
      return true;
    }
    eof_ = true;
    return false;
  }
  void finish_value_line() {
    finish_line();
    advance_to_content();
  }

  void locate_enter(std::string_view token) {
    if (locator_ == nullptr) return;
    path_.emplace_back(token);
    const size_t depth = path_.size();
    for (size_t t = 0; t < locator_->targets.size(); ++t) {
      const auto& tokens = locator_->targets[t];
      if (!done_[t] && locator_->matched[t] == depth - 1 && depth <= tokens.size() &&
          tokens[depth - 1] == token) {
        locator_->matched[t] = depth;
        locator_->lines[t] = line_;
      }
    }
  }
  void locate_leave() {
    if (locator_ == nullptr) return;
    const size_t depth = path_.size();
    // Leaving a matched node: no later node can lie on that target's path.
    for (size_t t = 0; t < locator_->targets.size(); ++t) {
      if (locator_->matched[t] >= depth) done_[t] = true;
    }
    path_.pop_back();
  }

  // `key: ...` on this line, with a plain or one-line quoted key.
  bool looks_like_key() const {
    const char* q = p_;
    const char c = *q;
    if (c == '"' || c == '\'') {
      ++q;
      while (q < end_ && *q != '\n') {
        if (c == '\'' && *q == '\'') {
          if (q + 1 < end_ && q[1] == '\'') {
            q += 2;
            continue;
          }
          break;
        }
        if (c == '"' && *q == '\\' && q + 1 < end_ && q[1] != '\n') {
          q += 2;
          continue;
        }
        if (c == '"' && *q == '"') break;
        ++q;
      }
      if (q >= end_ || *q != c) return false;
      ++q;
      while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
      return q < end_ && *q == ':' && blank_at(q + 1);
    }
    if (kNotKeyStart(c)) return false;
    for (; (q = next_key_scan_stop(q, end_)) < end_; ++q) {
      if (*q == '\n' || *q == '\r') return false;
      if (*q == ':' && blank_at(q + 1)) {
        key_line_start_ = p_;  // parse_key() need not scan for the ':' again
        key_colon_ = q;
        return true;
      }
      if (*q == '#' && (q[-1] == ' ' || q[-1] == '\t')) return false;
    }
    return false;
  }

  std::string parse_key() {
    std::string key = *p_ == '"'    ? parse_double_quoted()
                      : *p_ == '\'' ? parse_single_quoted()
                                    : parse_plain_key();
    skip_inline_ws();
    if (p_ == end_ || *p_ != ':') throw Unsupported{};
    ++p_;
    return key;
  }

  // A plain key, up to the ':' looks_like_key() found. Most need no resolution and are built
  // from their text at once (assigning to an empty string costs more).
  std::string parse_plain_key() {
    const char* start = p_;
    const char* q = p_;
    if (key_line_start_ == p_) {
      q = key_colon_;  // looks_like_key() found it here
    } else {
      while (!(*q == ':' && blank_at(q + 1))) ++q;  // looks_like_key() found it
    }
    const char* e = q;
    while (e > start && (e[-1] == ' ' || e[-1] == '\t')) --e;
    const std::string_view text(start, static_cast<size_t>(e - start));
    if (text == "<<") throw Unsupported{};  // merge keys: yaml-cpp path
    p_ = q;
    if (!key_needs_resolution(*start)) return std::string(text);
    std::optional<std::string> key = resolve_plain_key(text);
    if (!key) throw Unsupported{};
    return std::move(*key);
  }

  void parse_block_node(int indent, Json& out) {
    if (is_seq_entry()) {
      parse_block_seq(indent, out);
    } else if (looks_like_key()) {
      parse_block_map(indent, out);
    } else {
      if (*p_ == '|' || *p_ == '>') throw Unsupported{};
      parse_inline_value(indent - 1, out);
    }
  }

  // Entries go straight into the object: gpuadmit::ordered_map's elements move without throwing
  // (engine/json_map.h), so growing it moves them rather than copying subtrees.
  static Json& slot_for(Json::object_t& object, std::string key, int key_line,
                        std::vector<DuplicateKey>* duplicates) {
    for (auto& entry : object) {
      if (entry.first == key) {
        if (duplicates != nullptr) duplicates->push_back({key, key_line});
        entry.second = nullptr;
        return entry.second;
      }
    }
    return object.emplace_back(std::move(key), nullptr).second;
  }

  void parse_block_map(int indent, Json& out) {
    DepthGuard guard(this);
    out = empty_object();
    auto& object = out.get_ref<Json::object_t&>();
    object.reserve(8);
    while (true) {
      const int key_line = line_;
      std::string key = parse_key();
      locate_enter(key);
      Json& slot = slot_for(object, std::move(key), key_line, duplicates_);
      parse_map_value(indent, slot);
      locate_leave();
      if (eof_) break;
      const int n = col();
      if (n < indent) break;
      if (n > indent || !looks_like_key()) throw Unsupported{};
    }
  }

  void parse_map_value(int indent, Json& slot) {
    skip_inline_ws();
    if (at_eol() || *p_ == '#') {
      finish_line();
      if (!advance_to_content()) return;
      const int n = col();
      if (n > indent) {
        parse_block_node(n, slot);
      } else if (n == indent && is_seq_entry()) {
        parse_block_seq(n, slot);  // `key:\n- a`: a sequence may sit at its key's indentation
      }
      return;
    }
    parse_inline_value(indent, slot);
  }

  void parse_block_seq(int indent, Json& out) {
    DepthGuard guard(this);
    out = empty_array();
    auto& array = out.get_ref<Json::array_t&>();
    size_t index = 0;
    while (true) {
      ++p_;  // '-'
      if (p_ < end_ && *p_ == '\t') throw Unsupported{};
      Json& item = array.emplace_back();
      if (locator_ != nullptr) locate_enter(std::to_string(index));
      skip_inline_ws();
      if (at_eol() || *p_ == '#') {
        finish_line();
        if (advance_to_content() && col() > indent) parse_block_node(col(), item);
      } else {
        const int c = col();
        if (*p_ == '|' || *p_ == '>') {
          parse_inline_value(indent, item);
        } else if (is_seq_entry()) {
          parse_block_seq(c, item);
        } else if (looks_like_key()) {
          parse_block_map(c, item);
        } else {
          parse_inline_value(indent, item);
        }
      }
      locate_leave();
      ++index;
      if (eof_) return;
      const int n = col();
      if (n < indent) return;
      if (n > indent) throw Unsupported{};
      if (!is_seq_entry()) return;
    }
  }

  // A value that starts on the current line. `parent_indent`: the indentation of the collection
  // holding it (block scalars' content must be indented more).
  void parse_inline_value(int parent_indent, Json& out) {
    switch (*p_) {
      case '|':
      case '>':
        parse_block_scalar(parent_indent, out);
        return;
      case '[':
      case '{':
        parse_flow_node(out);
        finish_value_line();
        return;
      case '"':
        out = parse_double_quoted();
        finish_value_line();
        return;
      case '\'':
        out = parse_single_quoted();
        finish_value_line();
        return;
      case '&':
      case '*':
      case '!':
      case '%':
      case '@':
      case '`':
      case '?':
      case ',':
      case ']':
      case '}':
      case '#':
        throw Unsupported{};
      case '-':
      case ':':
        if (blank_at(p_ + 1)) throw Unsupported{};
        break;
      default:
        break;
    }
    const char* start = p_;
    const char* q = p_;
    while (q < end_ && *q != '\n' && *q != '\r') {
      if (*q == '#' && (q[-1] == ' ' || q[-1] == '\t')) break;
      if (*q == ':' && blank_at(q + 1)) throw Unsupported{};  // `a: b: c`
      ++q;
    }
    const char* e = q;
    while (e > start && (e[-1] == ' ' || e[-1] == '\t')) --e;
    out = resolve_plain_scalar(std::string_view(start, static_cast<size_t>(e - start)));
    p_ = q;
    finish_value_line();
  }

  // One line of a block scalar: its text without the content indentation, or empty.
  struct BlockLine {
    std::string_view text;
    bool empty;
    bool has_break;
  };

  void parse_block_scalar(int parent_indent, Json& out) {
    const bool literal = *p_ == '|';
    const char chomp = read_block_scalar_header();
    const std::vector<BlockLine> lines = read_block_lines(parent_indent, literal);
    out = block_scalar_text(lines, literal, chomp);
    if (p_ < end_) advance_to_content();
    if (p_ == end_) eof_ = true;
  }

  // `|`, `>`, optionally `-` or `+`, then the end of the line; returns the chomping ('c': clip).
  char read_block_scalar_header() {
    ++p_;
    char chomp = 'c';
    if (p_ < end_ && (*p_ == '-' || *p_ == '+')) chomp = *p_++;
    // Explicit indentation indicators are rare in manifests: yaml-cpp reads them.
    if (p_ < end_ && !is_blank(*p_) && *p_ != '#') throw Unsupported{};
    finish_line();
    return chomp;
  }

  // The scalar's lines, up to the first one indented no more than `parent_indent` (or less than
  // the content); leaves p_ at the start of that line.
  std::vector<BlockLine> read_block_lines(int parent_indent, bool literal) {
    std::vector<BlockLine> lines;
    int content_indent = -1;
    int leading_blank_spaces = 0;
    while (p_ < end_) {
      const char* q = p_;
      while (q < end_ && *q == ' ') ++q;
      const int spaces = static_cast<int>(q - p_);
      const char* eol = find_newline(q);
      const bool has_break = eol != end_;
      const char* content_end = eol;
      if (content_end > q && content_end[-1] == '\r') --content_end;
      if (q < content_end && *q == '\t' && (content_indent < 0 || spaces < content_indent)) {
        throw Unsupported{};
      }
      if (q == content_end) {  // only spaces
        if (content_indent < 0) {
          leading_blank_spaces = std::max(leading_blank_spaces, spaces);
          lines.push_back({{}, true, has_break});
        } else if (spaces > content_indent) {
          if (!literal) throw Unsupported{};
          lines.push_back({std::string_view(p_ + content_indent,
                                            static_cast<size_t>(content_end - p_ - content_indent)),
                           false, has_break});
        } else {
          lines.push_back({{}, true, has_break});
        }
      } else {
        if (content_indent < 0) {
          if (spaces <= parent_indent) break;
          if (leading_blank_spaces > spaces) throw Unsupported{};
          content_indent = spaces;
        }
        if (spaces < content_indent) break;
        const std::string_view text(p_ + content_indent,
                                    static_cast<size_t>(content_end - p_ - content_indent));
        if (text.find('\r') != std::string_view::npos) throw Unsupported{};
        if (!literal && (text.front() == ' ' || text.front() == '\t')) throw Unsupported{};
        lines.push_back({text, false, has_break});
      }
      if (!has_break) {
        p_ = end_;
        break;
      }
      p_ = eol + 1;
      ++line_;
      line_start_ = p_;
    }
    return lines;
  }

  // The scalar's value: its content lines joined (kept or folded), then chomped.
  static std::string block_scalar_text(const std::vector<BlockLine>& lines, bool literal,
                                       char chomp) {
    // Lines after the last content line are trailing (chomping decides about them).
    size_t last_content = lines.size();
    for (size_t i = lines.size(); i > 0; --i) {
      if (!lines[i - 1].empty) {
        last_content = i - 1;
        break;
      }
    }
    std::string text;
    size_t trailing_from = 0;  // the lines whose breaks `+` keeps
    if (last_content < lines.size()) {
      text = literal ? join_literal(lines, last_content) : join_folded(lines, last_content);
      if (chomp != '-' && lines[last_content].has_break) text += '\n';
      trailing_from = last_content + 1;
    }
    if (chomp == '+') {
      for (size_t i = trailing_from; i < lines.size(); ++i) {
        if (lines[i].has_break) text += '\n';
      }
    }
    return text;
  }

  // `|`: the lines as they are, joined by line breaks.
  static std::string join_literal(const std::vector<BlockLine>& lines, size_t last_content) {
    std::string text;
    for (size_t i = 0; i <= last_content; ++i) {
      text.append(lines[i].text);
      if (i < last_content) text += '\n';
    }
    return text;
  }

  // `>`: a line break between two content lines becomes a space; empty lines stay breaks.
  static std::string join_folded(const std::vector<BlockLine>& lines, size_t last_content) {
    std::string text;
    int pending = 0;
    bool first = true;
    for (size_t i = 0; i <= last_content; ++i) {
      if (lines[i].empty) {
        ++pending;
        continue;
      }
      if (first || pending != 0) {
        text.append(static_cast<size_t>(pending), '\n');
      } else {
        text += ' ';
      }
      text.append(lines[i].text);
      first = false;
      pending = 0;
    }
    return text;
  }

  std::string parse_double_quoted() {
    ++p_;
    std::string s;
    while (true) {
      if (p_ >= end_ || *p_ == '\n' || *p_ == '\r') throw Unsupported{};  // multi-line: yaml-cpp
      const char c = *p_;
      if (c == '"') {
        ++p_;
        return s;
      }
      if (c != '\\') {
        const char* q = p_;
        while (q < end_ && *q != '"' && *q != '\\' && *q != '\n' && *q != '\r') ++q;
        s.append(p_, q);
        p_ = q;
        continue;
      }
      ++p_;
      if (p_ >= end_) throw Unsupported{};
      append_escape(*p_++, s);
    }
  }

  // The YAML 1.2 escapes (§5.7) go-yaml v2 reads: one character, or a code point as UTF-8.
  void append_escape(char e, std::string& s) {
    static constexpr std::pair<char, char> kCharacters[] = {
        {'0', '\0'}, {'a', '\a'}, {'b', '\b'}, {'t', '\t'}, {'\t', '\t'},
        {'n', '\n'}, {'v', '\v'}, {'f', '\f'}, {'r', '\r'}, {'e', '\x1b'},
        {' ', ' '},  {'"', '"'},  {'/', '/'},  {'\\', '\\'}};
    for (const auto& [escape, c] : kCharacters) {
      if (e == escape) {
        s += c;
        return;
      }
    }
    static constexpr std::pair<char, uint32_t> kCodePoints[] = {
        {'N', 0x85}, {'_', 0xA0}, {'L', 0x2028}, {'P', 0x2029}};
    for (const auto& [escape, cp] : kCodePoints) {
      if (e == escape) {
        append_utf8(s, cp);
        return;
      }
    }
    if (e == 'x' || e == 'u' || e == 'U') {
      append_utf8(s, parse_hex(e == 'x' ? 2 : e == 'u' ? 4 : 8));
      return;
    }
    throw Unsupported{};
  }

  uint32_t parse_hex(int digits) {
    if (end_ - p_ < digits) throw Unsupported{};
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = *p_++;
      uint32_t d;
      if (c >= '0' && c <= '9') {
        d = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        throw Unsupported{};
      }
      v = v * 16 + d;
    }
    // Surrogates (JSON-style pairs) and out-of-range code points: yaml-cpp decides.
    if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) throw Unsupported{};
    return v;
  }

  std::string parse_single_quoted() {
    ++p_;
    std::string s;
    while (true) {
      if (p_ >= end_ || *p_ == '\n' || *p_ == '\r') throw Unsupported{};
      if (*p_ == '\'') {
        if (p_ + 1 < end_ && p_[1] == '\'') {
          s += '\'';
          p_ += 2;
          continue;
        }
        ++p_;
        return s;
      }
      s += *p_++;
    }
  }

  // Flow context: whitespace, line breaks and comments between tokens.
  void skip_flow_ws() {
    while (true) {
      while (p_ < end_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
      if (p_ == end_) throw Unsupported{};  // unterminated flow collection
      if (*p_ == '\n' || *p_ == '\r') {
        consume_eol();
        continue;
      }
      if (*p_ == '#') {
        if (p_ > line_start_ && p_[-1] != ' ' && p_[-1] != '\t') throw Unsupported{};
        skip_to_eol();
        continue;
      }
      return;
    }
  }

  bool flow_end_at(const char* q) const {
    return q == end_ || is_blank(*q) || *q == ',' || *q == '[' || *q == ']' || *q == '{' ||
           *q == '}';
  }

  // A plain scalar in flow context: ends at `,[]{}`, `: `, ` #` or the line end.
  std::string_view scan_flow_plain() {
    const char c = *p_;
    if (c == '\0' || std::strchr("&*!|>%@`?#,[]{}'\"", c) != nullptr) throw Unsupported{};
    if ((c == '-' || c == ':') && flow_end_at(p_ + 1)) throw Unsupported{};
    const char* start = p_;
    const char* q = p_;
    while (q < end_ && *q != '\n' && *q != '\r' && *q != ',' && *q != '[' && *q != ']' &&
           *q != '{' && *q != '}') {
      if (*q == ':' && flow_end_at(q + 1)) break;
      if (*q == '#' && q > start && (q[-1] == ' ' || q[-1] == '\t')) break;
      ++q;
    }
    const char* e = q;
    while (e > start && (e[-1] == ' ' || e[-1] == '\t')) --e;
    if (e == start) throw Unsupported{};
    p_ = q;
    return std::string_view(start, static_cast<size_t>(e - start));
  }

  void parse_flow_node(Json& out) {
    const char c = *p_;
    if (c == '[') {
      parse_flow_sequence(out);
    } else if (c == '{') {
      parse_flow_mapping(out);
    } else if (c == '"') {
      out = parse_double_quoted();
    } else if (c == '\'') {
      out = parse_single_quoted();
    } else {
      out = resolve_plain_scalar(scan_flow_plain());
    }
  }

  // After an item or a member: true at the ',' that precedes another, false at the closing
  // bracket (both consumed); anything else is for yaml-cpp.
  bool flow_continues(char close) {
    skip_flow_ws();
    if (*p_ == ',') {
      ++p_;
      return true;
    }
    if (*p_ != close) throw Unsupported{};
    ++p_;
    return false;
  }

  void parse_flow_sequence(Json& out) {
    DepthGuard guard(this);
    ++p_;
    out = empty_array();
    auto& array = out.get_ref<Json::array_t&>();
    size_t index = 0;
    do {
      skip_flow_ws();
      if (*p_ == ']') {
        ++p_;
        return;
      }
      Json& item = array.emplace_back();
      if (locator_ != nullptr) locate_enter(std::to_string(index));
      parse_flow_node(item);
      locate_leave();
      ++index;
    } while (flow_continues(']'));
  }

  void parse_flow_mapping(Json& out) {
    DepthGuard guard(this);
    ++p_;
    out = empty_object();
    auto& object = out.get_ref<Json::object_t&>();
    do {
      skip_flow_ws();
      if (*p_ == '}') {
        ++p_;
        return;
      }
      const int key_line = line_;
      std::string key = parse_flow_key();
      skip_flow_ws();
      if (*p_ != ':') throw Unsupported{};  // `{a, b}`: yaml-cpp
      ++p_;
      locate_enter(key);
      Json& slot = slot_for(object, std::move(key), key_line, duplicates_);
      skip_flow_ws();
      if (*p_ != ',' && *p_ != '}') parse_flow_node(slot);
      locate_leave();
    } while (flow_continues('}'));
  }

  std::string parse_flow_key() {
    std::optional<std::string> key = *p_ == '"'    ? parse_double_quoted()
                                     : *p_ == '\'' ? parse_single_quoted()
                                                   : resolve_plain_key(scan_flow_plain());
    if (!key || *key == "<<") throw Unsupported{};  // a merge key: yaml-cpp
    return std::move(*key);
  }

  const char* p_;
  const char* end_;
  // Where looks_like_key() last found a plain key, and its ':'.
  mutable const char* key_line_start_ = nullptr;
  mutable const char* key_colon_ = nullptr;
  const char* line_start_;
  int line_ = 0;
  int depth_ = 0;
  bool eof_ = false;
  std::vector<DuplicateKey>* duplicates_;
  Locator* locator_;
  std::vector<std::string> path_;
  std::vector<bool> done_;
};

}  // namespace

FastResult fast_parse_yaml(std::string_view text, Json& out, std::vector<DuplicateKey>* duplicates,
                           Locator* locator) {
  FastParser parser(text, duplicates, locator);
  return parser.run(out);
}

}  // namespace gpuadmit::yaml
