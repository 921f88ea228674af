#include "fleet/json_stream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/json_parse.h"

namespace gpuadmit::fleet {
namespace {

// lint's depth limit (SPEC §9): a kept value nested deeper is an error.
constexpr size_t kMaxDepth = 100;
constexpr size_t kChunk = 16u << 20;

// What the live report reads of an object, member by member. A member not listed is kept
// (keep_rest) or dropped; a listed one is kept whole (nullptr filter), dropped (&kDrop) or
// filtered again. `elements` filters each element when the value is an array.
struct Filter {
  bool keep_rest = false;
  std::vector<std::pair<std::string_view, const Filter*>> members;
  const Filter* elements = nullptr;
};
const Filter kDrop{};

const Filter kContainer{false,
                        {{"name", nullptr}, {"resources", nullptr}, {"restartPolicy", nullptr}}};
const Filter kContainers{false, {}, &kContainer};
// Pod: where it runs and what it asks for; Node: taints, cordoned; ResourceSlice: driver, node,
// pool, devices. kPendingSpec adds what places a pod, read again for pods without a node only.
#define GPUADMIT_FLEET_SPEC_MEMBERS                                                              \
  {"nodeName", nullptr}, {"schedulingGates", nullptr}, {"resourceClaims", nullptr},              \
      {"resources", nullptr}, {"overhead", nullptr}, {"containers", &kContainers},               \
      {"initContainers", &kContainers}, {"ephemeralContainers", &kContainers},                   \
      {"taints", nullptr}, {"unschedulable", nullptr}, {"driver", nullptr}, {"pool", nullptr}, { \
    "devices", nullptr                                                                           \
  }
const Filter kSpec{false, {GPUADMIT_FLEET_SPEC_MEMBERS}};
const Filter kPendingSpec{false,
                          {GPUADMIT_FLEET_SPEC_MEMBERS,
                           {"nodeSelector", nullptr},
                           {"affinity", nullptr},
                           {"tolerations", nullptr}}};
#undef GPUADMIT_FLEET_SPEC_MEMBERS
const Filter kMetadata{false,
                       {{"name", nullptr},
                        {"generateName", nullptr},
                        {"namespace", nullptr},
                        {"uid", nullptr},
                        {"labels", nullptr},
                        {"annotations", nullptr},
                        {"ownerReferences", nullptr}}};
// A condition's type and status (Node Ready, Pod PodScheduled) and message (why unschedulable).
const Filter kCondition{false, {{"type", nullptr}, {"status", nullptr}, {"message", nullptr}}};
const Filter kConditions{false, {}, &kCondition};
// Pod: phase, conditions, nominatedNodeName; Node: allocatable, conditions; ResourceClaim:
// allocation, reservedFor.
const Filter kStatus{false,
                     {{"phase", nullptr},
                      {"conditions", &kConditions},
                      {"nominatedNodeName", nullptr},
                      {"allocatable", nullptr},
                      {"allocation", nullptr},
                      {"reservedFor", nullptr}}};
const Filter kItem{false,
                   {{"apiVersion", nullptr},
                    {"kind", nullptr},
                    {"items", nullptr},  // a List inside a List: kept whole, expanded later
                    {"metadata", &kMetadata},
                    {"spec", &kSpec},
                    {"status", &kStatus}}};
const Filter kPendingPod{false,
                         {{"apiVersion", nullptr},
                          {"kind", nullptr},
                          {"metadata", &kMetadata},
                          {"spec", &kPendingSpec},
                          {"status", &kStatus}}};

// A Pod the scheduler has not bound: its placement is read too (kPendingPod).
bool pending_pod(const Json& item) {
  if (string_member(item, "kind") != "Pod") return false;
  const Json* spec = find_member(item, "spec");
  return spec == nullptr || string_member(*spec, "nodeName").empty();
}

enum class Scan { kOk, kIncomplete, kInvalid };

struct Cursor {
  const char* p;
  const char* end;
  const char* error_at = nullptr;
  std::string message;
  Scan invalid(std::string text) {
    error_at = p;
    message = std::move(text);
    return Scan::kInvalid;
  }
};

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Skips JSON whitespace, 16 bytes at a time: kubectl indents every line.
inline void skip_ws(Cursor& c) {
#if defined(__SSE2__)
  while (c.end - c.p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.p));
    const __m128i ws = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(ws));
    if (mask != 0xFFFFu) {
      c.p += __builtin_ctz(~mask);
      return;
    }
    c.p += 16;
  }
#endif
  while (c.p < c.end && is_space(*c.p)) ++c.p;
}

// c.p after the opening quote; leaves it after the closing one. Escapes are skipped whole ("\""
// does not end the string; "\u0022" holds no quote or backslash byte).
inline Scan skip_string(Cursor& c) {
#if defined(__SSE2__)
  while (c.end - c.p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.p));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')))));
    if (mask == 0) {
      c.p += 16;
      continue;
    }
    c.p += __builtin_ctz(mask);
    if (*c.p == '"') {
      ++c.p;
      return Scan::kOk;
    }
    c.p += 2;  // a backslash and the byte it escapes
  }
#endif
  while (c.p < c.end) {
    if (*c.p == '"') {
      ++c.p;
      return Scan::kOk;
    }
    c.p += *c.p == '\\' ? 2 : 1;
  }
  return Scan::kIncomplete;
}

inline bool scalar_byte(char ch) {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || ch == '-' || ch == '+' ||
         ch == '.' || ch == 'E';
}

#if defined(__SSE2__)
// The offset of the first of '"', '{', '}', '[' or ']' in 16 bytes, or 16. With bit 5 set,
// '[' (0x5B) reads as '{' (0x7B) and ']' (0x5D) as '}' (0x7D); no other byte does.
inline int structural(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
  const __m128i hits = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')),
                                                 _mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
  const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hits));
  return mask == 0 ? 16 : __builtin_ctz(mask);
}
#endif

// Skips one value (c.p at its first byte). Inside arrays and objects only brackets and strings
// are read (16 bytes at a time between them): a skipped value is checked for structure.
Scan skip_value(Cursor& c) {
  char open[kMaxDepth];  // the brackets to close, innermost last
  size_t depth = 0;
  skip_ws(c);
  for (;;) {
    if (c.p >= c.end) return Scan::kIncomplete;
    if (depth > 0) {  // jump to the next bracket or string
#if defined(__SSE2__)
      while (c.end - c.p >= 16) {
        const int at = structural(c.p);
        c.p += at;
        if (at < 16) break;
      }
#endif
      while (c.p < c.end && *c.p != '"' && *c.p != '{' && *c.p != '}' && *c.p != '[' &&
             *c.p != ']') {
        ++c.p;
      }
      if (c.p >= c.end) return Scan::kIncomplete;
    }
    const char ch = *c.p;
    if (ch == '"') {
      ++c.p;
      if (skip_string(c) != Scan::kOk) return Scan::kIncomplete;
    } else if (ch == '{' || ch == '[') {
      if (depth == kMaxDepth) return c.invalid("nested deeper than 100");
      open[depth++] = ch == '{' ? '}' : ']';
      ++c.p;
      continue;
    } else if (ch == '}' || ch == ']') {
      if (depth == 0 || open[depth - 1] != ch) {
        return c.invalid("unexpected '" + std::string(1, ch) + "'");
      }
      --depth;
      ++c.p;
    } else if (depth == 0 && scalar_byte(ch)) {  // a number, true, false or null
      while (c.p < c.end && scalar_byte(*c.p)) ++c.p;
      if (c.p >= c.end) return Scan::kIncomplete;
    } else {
      return c.invalid("unexpected character");
    }
    if (depth == 0) return Scan::kOk;
  }
}

// Parses the value at c.p whole with the engine's parser.
Scan keep_value(Cursor& c, Json& out) {
  const char* start = c.p;
  if (Scan s = skip_value(c); s != Scan::kOk) return s;
  const JsonParseResult r =
      parse_json(std::string_view(start, static_cast<size_t>(c.p - start)), out, kMaxDepth);
  if (r == JsonParseResult::kOk) return Scan::kOk;
  c.p = start;
  return c.invalid(r == JsonParseResult::kTooDeep ? "nested deeper than 100"
                                                  : "invalid JSON value");
}

Scan select_value(Cursor& c, const Filter* filter, Json& out);

// A member key; `scratch` holds it when it has escapes.
Scan read_key(Cursor& c, std::string_view& key, std::string& scratch) {
  if (c.p >= c.end) return Scan::kIncomplete;
  if (*c.p != '"') return c.invalid("expected a member name");
  const char* start = ++c.p;
  if (skip_string(c) != Scan::kOk) return Scan::kIncomplete;
  key = std::string_view(start, static_cast<size_t>(c.p - 1 - start));
  if (key.find('\\') == std::string_view::npos) return Scan::kOk;
  Json decoded;
  if (!parse_json(std::string_view(start - 1, key.size() + 2), decoded) || !decoded.is_string())
    return c.invalid("invalid member name");
  scratch = decoded.get<std::string>();
  key = scratch;
  return Scan::kOk;
}

Scan select_object(Cursor& c, const Filter& filter, Json& out) {
  out = Json::object();
  ++c.p;  // '{'
  std::string scratch;
  for (bool first = true;; first = false) {
    skip_ws(c);
    if (c.p >= c.end) return Scan::kIncomplete;
    if (*c.p == '}') {
      ++c.p;
      return Scan::kOk;
    }
    if (!first) {
      if (*c.p != ',') return c.invalid("expected ',' or '}'");
      ++c.p;
      skip_ws(c);
    }
    std::string_view key;
    if (Scan s = read_key(c, key, scratch); s != Scan::kOk) return s;
    skip_ws(c);
    if (c.p >= c.end) return Scan::kIncomplete;
    if (*c.p != ':') return c.invalid("expected ':'");
    ++c.p;
    skip_ws(c);
    const Filter* member = filter.keep_rest ? nullptr : &kDrop;
    for (const auto& [name, f] : filter.members) {
      if (name == key) member = f;
    }
    if (member == &kDrop) {
      if (Scan s = skip_value(c); s != Scan::kOk) return s;
      continue;
    }
    Json value;
    if (Scan s = select_value(c, member, value); s != Scan::kOk) return s;
    out[std::string(key)] = std::move(value);  // last one wins, as in parse_json
  }
}

Scan select_array(Cursor& c, const Filter& elements, Json& out) {
  out = Json::array();
  ++c.p;  // '['
  for (bool first = true;; first = false) {
    skip_ws(c);
    if (c.p >= c.end) return Scan::kIncomplete;
    if (*c.p == ']') {
      ++c.p;
      return Scan::kOk;
    }
    if (!first) {
      if (*c.p != ',') return c.invalid("expected ',' or ']'");
      ++c.p;
      skip_ws(c);
    }
    Json value;
    if (Scan s = select_value(c, &elements, value); s != Scan::kOk) return s;
    out.push_back(std::move(value));
  }
}

Scan select_value(Cursor& c, const Filter* filter, Json& out) {
  if (c.p >= c.end) return Scan::kIncomplete;
  if (filter != nullptr && *c.p == '{' && (filter->keep_rest || !filter->members.empty())) {
    return select_object(c, *filter, out);
  }
  if (filter != nullptr && *c.p == '[' && filter->elements != nullptr) {
    return select_array(c, *filter->elements, out);
  }
  return keep_value(c, out);
}

size_t count_newlines(const char* p, const char* end) {
  size_t n = 0;
#if defined(__SSE2__)
  // Per 16 bytes: 0 or 1 per byte, summed by _mm_sad_epu8 into two 64-bit lanes.
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i one = _mm_set1_epi8(1);
  __m128i sums = _mm_setzero_si128();
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    sums = _mm_add_epi64(
        sums, _mm_sad_epu8(_mm_and_si128(_mm_cmpeq_epi8(v, nl), one), _mm_setzero_si128()));
    p += 16;
  }
  n = static_cast<size_t>(_mm_cvtsi128_si64(sums)) +
      static_cast<size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
#endif
  for (; p < end; ++p) n += *p == '\n';
  return n;
}

}  // namespace

JsonObjectStream::JsonObjectStream(std::FILE* file, int first_line)
    : file_(file), lines_before_(first_line - 1) {}

JsonObjectStream::JsonObjectStream(std::string_view text, int first_line)
    : data_(text), eof_(true), lines_before_(first_line - 1) {}

JsonObjectStream::~JsonObjectStream() = default;

int JsonObjectStream::line_at(size_t offset) {
  offset = std::min(offset, data_.size());
  if (offset < counted_to_) {
    counted_lines_ -=
        static_cast<int64_t>(count_newlines(data_.data() + offset, data_.data() + counted_to_));
  } else {
    counted_lines_ +=
        static_cast<int64_t>(count_newlines(data_.data() + counted_to_, data_.data() + offset));
  }
  counted_to_ = offset;
  const int64_t line = 1 + lines_before_ + counted_lines_;
  return line > INT32_MAX ? INT32_MAX : static_cast<int>(line);
}

bool JsonObjectStream::fill() {
  if (eof_ || file_ == nullptr) return false;
  // Drop what is done with; keep the value being read.
  line_at(keep_);
  lines_before_ += counted_lines_;
  counted_lines_ = 0;
  counted_to_ = 0;
  buffer_.erase(0, keep_);
  pos_ -= keep_;
  keep_ = 0;
  if (buffer_.size() >= kMaxItemBytes) {
    error_ =
        StreamError{line_at(0), "an object larger than " + std::to_string(kMaxItemBytes >> 20) +
                                    " MB; export fewer objects per item"};
    return false;
  }
  const size_t old = buffer_.size();
  buffer_.resize(old + kChunk);
  const size_t got = std::fread(buffer_.data() + old, 1, kChunk, file_);
  buffer_.resize(old + got);
  if (got < kChunk) {
    eof_ = true;
    if (std::ferror(file_)) {
      error_ = StreamError{0, std::string("reading the input failed: ") + std::strerror(errno)};
      return false;
    }
  }
  data_ = buffer_;
  return got > 0;
}

bool JsonObjectStream::fail(size_t at, std::string message) {
  error_ = StreamError{line_at(at), std::move(message)};
  state_ = State::kDone;
  return false;
}

bool JsonObjectStream::next(Json& out, int& line) {
  for (;;) {
    if (state_ == State::kDone || error_) return false;
    Cursor c{data_.data() + pos_, data_.data() + data_.size(), nullptr, {}};
    skip_ws(c);
    pos_ = static_cast<size_t>(c.p - data_.data());
    keep_ = pos_;
    if (c.p >= c.end) {
      if (fill()) continue;
      if (error_) return false;
      if (state_ != State::kTop) return fail(pos_, "the JSON ends inside a value");
      state_ = State::kDone;
      return false;
    }
    const char ch = *c.p;
    if (state_ == State::kTop) {
      if (ch != '{' && ch != '[') return fail(pos_, "expected a JSON object or array");
      top_array_ = ch == '[';
      state_ = top_array_ ? State::kItems : State::kTopMembers;
      first_ = true;
      saw_items_ = false;
      head_ = Json::object();
      head_line_ = line_at(pos_);
      ++pos_;
      continue;
    }
    const char close = state_ == State::kItems ? ']' : '}';
    if (ch == close) {
      ++pos_;
      first_ = false;
      if (state_ == State::kItems && !top_array_) {
        state_ = State::kTopMembers;
        continue;
      }
      state_ = State::kTop;
      if (close == '}' && !saw_items_) {  // a single object, not a List
        out = std::move(head_);
        line = head_line_;
        return true;
      }
      continue;
    }
    if (!first_) {
      if (ch != ',') return fail(pos_, std::string("expected ',' or '") + close + "'");
      ++c.p;
      skip_ws(c);
      if (c.p >= c.end) {  // read on, then the comma again
        if (fill()) continue;
        return fail(pos_, "the JSON ends inside a value");
      }
    }
    const size_t start = static_cast<size_t>(c.p - data_.data());
    keep_ = pos_;
    Scan s;
    if (state_ == State::kItems) {
      s = select_value(c, &kItem, out);
      if (s == Scan::kOk && pending_pod(out)) {
        Cursor again{data_.data() + start, c.end, nullptr, {}};
        s = select_value(again, &kPendingPod, out);
      }
    } else {
      std::string scratch;
      std::string_view key;
      s = read_key(c, key, scratch);
      if (s == Scan::kOk) {
        skip_ws(c);
        if (c.p >= c.end) {
          s = Scan::kIncomplete;
        } else if (*c.p != ':') {
          s = c.invalid("expected ':'");
        } else {
          ++c.p;
          skip_ws(c);
          if (c.p >= c.end) {
            s = Scan::kIncomplete;
          } else if (key == "items" && *c.p == '[') {
            saw_items_ = true;
            state_ = State::kItems;
            first_ = true;
            pos_ = static_cast<size_t>(c.p + 1 - data_.data());
            continue;
          } else {
            const Filter* member = &kDrop;
            for (const auto& [name, f] : kItem.members) {
              if (name == key) member = f;
            }
            std::string name(key);
            Json value;
            s = member == &kDrop ? skip_value(c) : select_value(c, member, value);
            if (s == Scan::kOk && member != &kDrop) head_[name] = std::move(value);
          }
        }
      }
    }
    if (s == Scan::kIncomplete) {
      if (fill()) continue;  // read on and scan the value again from its start
      if (error_) return false;
      return fail(start, "the JSON ends inside a value");
    }
    if (s == Scan::kInvalid) {
      return fail(static_cast<size_t>(c.error_at - data_.data()), "invalid JSON: " + c.message);
    }
    pos_ = static_cast<size_t>(c.p - data_.data());
    first_ = false;
    if (state_ == State::kItems) {
      line = line_at(start);
      if (out.is_object()) return true;
    }
  }
}

}  // namespace gpuadmit::fleet
