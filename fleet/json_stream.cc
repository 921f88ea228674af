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
namespace json_scan {

enum class Scan : int { kOk, kIncomplete, kInvalid };

struct Cursor {
  const char* p;
  const char* end;
  const char* error_at = nullptr;
  std::string message;
  int64_t lines = 0;  // newlines passed (JSON strings hold none: only whitespace does)
  Scan invalid(std::string text) {
    error_at = p;
    message = std::move(text);
    return Scan::kInvalid;
  }
};

}  // namespace json_scan

namespace {

// lint's depth limit (SPEC §9): a kept value nested deeper is an error.
constexpr size_t kMaxDepth = 100;
constexpr size_t kChunk = 16u << 20;

// What the live report reads of an object, member by member. A member not listed is kept
// (keep_rest) or dropped; a listed one is kept whole (nullptr filter), dropped (&kDrop) or
// filtered again. `elements` filters each element when the value is an array. A `defer`red
// member is only scanned at first and read once the object proves wanted (set_interest): a
// Pod's metadata and conditions matter only for GPU pods.
struct Filter;
using Members = std::vector<std::pair<std::string_view, const Filter*>>;
struct Filter {
  Filter() = default;
  Filter(bool keep, Members m, const Filter* each = nullptr, bool later = false)
      : keep_rest(keep), members(std::move(m)), elements(each), defer(later) {
    for (const auto& [name, f] : members) first[static_cast<unsigned char>(name[0])] = true;
  }
  // The member named `key`: its filter, or `fallback` when it is not listed.
  const Filter* find(std::string_view key, const Filter* fallback) const {
    if (key.empty() || !first[static_cast<unsigned char>(key[0])]) return fallback;
    for (const auto& [name, f] : members) {
      if (name.size() == key.size() && name == key) return f;
    }
    return fallback;
  }
  bool keep_rest = false;
  Members members;
  const Filter* elements = nullptr;
  bool defer = false;
  bool first[256] = {};  // the first bytes of the members' names: most keys are not listed
};
const Filter kDrop{};

const Filter kContainer{false,
                        {{"name", nullptr}, {"resources", nullptr}, {"restartPolicy", nullptr}}};
const Filter kContainers{false, {}, &kContainer};
// Pod: where it runs and what it asks for; Node: taints, cordoned; ResourceSlice: driver, node,
// pool, devices. kPendingSpec adds what places a pod, read again for pods without a node only.
const Members kSpecMembers = {{"nodeName", nullptr},
                              {"schedulingGates", nullptr},
                              {"resourceClaims", nullptr},
                              {"resources", nullptr},
                              {"overhead", nullptr},
                              {"containers", &kContainers},
                              {"initContainers", &kContainers},
                              {"ephemeralContainers", &kContainers},
                              {"taints", nullptr},
                              {"unschedulable", nullptr},
                              {"driver", nullptr},
                              {"pool", nullptr},
                              {"devices", nullptr}};
const Filter kSpec{false, kSpecMembers};
const Filter kPendingSpec{
    false, [] {
      Members m = kSpecMembers;
      m.insert(m.end(),
               {{"nodeSelector", nullptr}, {"affinity", nullptr}, {"tolerations", nullptr}});
      return m;
    }()};
const Members kMetadataMembers = {
    {"name", nullptr},   {"generateName", nullptr}, {"namespace", nullptr},      {"uid", nullptr},
    {"labels", nullptr}, {"annotations", nullptr},  {"ownerReferences", nullptr}};
const Filter kMetadata{false, kMetadataMembers, nullptr, true};
// A condition's type and status (Node Ready, Pod PodScheduled) and message (why unschedulable).
const Filter kCondition{false, {{"type", nullptr}, {"status", nullptr}, {"message", nullptr}}};
const Filter kConditions{false, {}, &kCondition, true};
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

// set_whole_items(): everything but the server's field-ownership bookkeeping and the status
// (what the controllers and the kubelet report; no rule or mutator reads it).
const Filter kWholeMetadata{true, {{"managedFields", &kDrop}}};
const Filter kWholeItem{true, {{"metadata", &kWholeMetadata}, {"status", &kDrop}}};

// A Pod the scheduler has not bound: its placement is read too (kPendingPod).
bool pending_pod(const Json& item) {
  if (string_member(item, "kind") != "Pod") return false;
  const Json* spec = find_member(item, "spec");
  return spec == nullptr || string_member(*spec, "nodeName").empty();
}

// A deferred member: where it goes in the object, its text and its filter.
struct Deferred {
  std::vector<std::string> path;
  const char* start = nullptr;
  const char* end = nullptr;
  const Filter* filter = nullptr;
};

// What a selective parse records beyond the Json it builds.
struct Selection {
  bool defer = false;                  // scan deferred members instead of reading them
  std::vector<std::string_view> path;  // member names from the item down to the current value
  std::vector<Deferred> deferred;
};

using json_scan::Cursor;
using json_scan::Scan;

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline int bit_count(uint64_t bits) {  // a few bits set: cheaper than libgcc's popcount
  int n = 0;
  for (; bits != 0; bits &= bits - 1) ++n;
  return n;
}

// Skips JSON whitespace, 16 bytes at a time: kubectl indents every line.
inline void skip_ws(Cursor& c) {
#if defined(__SSE2__)
  while (c.end - c.p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.p));
    const __m128i nl = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
    const __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), nl),
                                    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                                 _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(ws));
    const unsigned newlines = static_cast<unsigned>(_mm_movemask_epi8(nl));
    if (mask != 0xFFFFu) {
      const int at = __builtin_ctz(~mask);
      c.lines += bit_count(newlines & ((1u << at) - 1));
      c.p += at;
      return;
    }
    c.lines += bit_count(newlines);
    c.p += 16;
  }
#endif
  while (c.p < c.end && is_space(*c.p)) c.lines += *c.p++ == '\n';
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

// The state of a scan through an array or object: the brackets to close, innermost last, and
// whether it is inside a string (and the next byte escaped).
struct Nesting {
  char open[kMaxDepth];
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
};

// One byte of a container, scalar: true when it closed the outermost bracket.
inline Scan step(Cursor& c, Nesting& n, bool& done) {
  const char ch = *c.p;
  if (n.in_string) {
    if (n.escaped) {
      n.escaped = false;
    } else if (ch == '\\') {
      n.escaped = true;
    } else if (ch == '"') {
      n.in_string = false;
    }
  } else if (ch == '"') {
    n.in_string = true;
  } else if (ch == '{' || ch == '[') {
    if (n.depth == kMaxDepth) return c.invalid("nested deeper than 100");
    n.open[n.depth++] = ch == '{' ? '}' : ']';
  } else if (ch == '}' || ch == ']') {
    if (n.depth == 0 || n.open[n.depth - 1] != ch) {
      return c.invalid("unexpected '" + std::string(1, ch) + "'");
    }
    done = --n.depth == 0;
  } else if (ch == '\n') {
    ++c.lines;
  }
  ++c.p;
  return Scan::kOk;
}

#if defined(__SSE2__)
// 64 bytes' quotes, backslashes, opening and closing brackets and newlines as bit masks. With
// bit 5 set, '[' (0x5B) reads as '{' (0x7B) and ']' (0x5D) as '}' (0x7D); no other byte does.
struct Block {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0, newline = 0;
};
inline uint64_t lanes(__m128i a, __m128i b, __m128i c, __m128i d) {
  return static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(a))) |
         static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(b))) << 16 |
         static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(c))) << 32 |
         static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(d))) << 48;
}
inline Block classify(const char* p) {
  const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
  const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
  const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
  auto eq = [](__m128i v, char ch) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(ch)); };
  auto fold = [](__m128i v) { return _mm_or_si128(v, _mm_set1_epi8(0x20)); };
  Block b;
  b.quote = lanes(eq(v0, '"'), eq(v1, '"'), eq(v2, '"'), eq(v3, '"'));
  b.backslash = lanes(eq(v0, '\\'), eq(v1, '\\'), eq(v2, '\\'), eq(v3, '\\'));
  b.open = lanes(eq(fold(v0), '{'), eq(fold(v1), '{'), eq(fold(v2), '{'), eq(fold(v3), '{'));
  b.close = lanes(eq(fold(v0), '}'), eq(fold(v1), '}'), eq(fold(v2), '}'), eq(fold(v3), '}'));
  b.newline = lanes(eq(v0, '\n'), eq(v1, '\n'), eq(v2, '\n'), eq(v3, '\n'));
  return b;
}

// Bit i set when an odd number of bits at or below i are: inside a string, between quotes.
inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}
#endif

// The array or object at c.p, to its matching bracket: 64 bytes at a time where they hold no
// backslash (strings found by their quotes, brackets outside them counted), byte by byte where
// they do (escapes).
Scan skip_container(Cursor& c) {
  Nesting n;
  bool done = false;
#if defined(__SSE2__)
  while (c.end - c.p >= 64) {
    const Block b = classify(c.p);
    if (b.backslash != 0 || n.escaped) {
      for (const char* stop = c.p + 64; c.p < stop && !done;) {
        if (Scan s = step(c, n, done); s != Scan::kOk) return s;
      }
      if (done) return Scan::kOk;
      continue;
    }
    uint64_t inside = prefix_xor(b.quote);
    if (n.in_string) inside = ~inside;
    for (uint64_t brackets = (b.open | b.close) & ~inside; brackets != 0;
         brackets &= brackets - 1) {
      const int i = __builtin_ctzll(brackets);
      const char ch = c.p[i];
      if (b.open >> i & 1) {
        if (n.depth == kMaxDepth) return c.p += i, c.invalid("nested deeper than 100");
        n.open[n.depth++] = ch == '{' ? '}' : ']';
      } else if (n.depth == 0 || n.open[n.depth - 1] != ch) {
        c.p += i;
        return c.invalid("unexpected '" + std::string(1, ch) + "'");
      } else if (--n.depth == 0) {
        c.lines += bit_count(b.newline & (~uint64_t{0} >> (63 - i)));
        c.p += i + 1;
        return Scan::kOk;
      }
    }
    n.in_string = inside >> 63;
    c.lines += bit_count(b.newline);
    c.p += 64;
  }
#endif
  while (c.p < c.end) {
    if (Scan s = step(c, n, done); s != Scan::kOk) return s;
    if (done) return Scan::kOk;
  }
  return Scan::kIncomplete;
}

// Skips one value (c.p at its first byte): a string or scalar token, or a whole array or object
// checked for its structure (brackets and strings), not token by token.
Scan skip_value(Cursor& c) {
  skip_ws(c);
  if (c.p >= c.end) return Scan::kIncomplete;
  const char ch = *c.p;
  if (ch == '{' || ch == '[') return skip_container(c);
  if (ch == '"') {
    ++c.p;
    return skip_string(c) == Scan::kOk ? Scan::kOk : Scan::kIncomplete;
  }
  if (!scalar_byte(ch))
    return c.invalid("unexpected " + std::string(ch == '}' || ch == ']' || ch == ',' || ch == ':'
                                                     ? "'" + std::string(1, ch) + "'"
                                                     : "character"));
  while (c.p < c.end && scalar_byte(*c.p)) ++c.p;
  return c.p < c.end ? Scan::kOk : Scan::kIncomplete;
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

Scan select_value(Cursor& c, const Filter* filter, Json& out, Selection& sel);

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

// A member key and its ':', with the whitespace around it: the cursor then at the value.
Scan read_member_name(Cursor& c, std::string_view& key, std::string& scratch) {
  if (Scan s = read_key(c, key, scratch); s != Scan::kOk) return s;
  skip_ws(c);
  if (c.p >= c.end) return Scan::kIncomplete;
  if (*c.p != ':') return c.invalid("expected ':'");
  ++c.p;
  skip_ws(c);
  return Scan::kOk;
}

Scan select_object(Cursor& c, const Filter& filter, Json& out, Selection& sel) {
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
    if (Scan s = read_member_name(c, key, scratch); s != Scan::kOk) return s;
    const Filter* member = filter.find(key, filter.keep_rest ? nullptr : &kDrop);
    if (member == &kDrop) {
      if (Scan s = skip_value(c); s != Scan::kOk) return s;
      continue;
    }
    if (member != nullptr && member->defer && sel.defer) {
      Deferred d;
      for (std::string_view p : sel.path) d.path.emplace_back(p);
      d.path.emplace_back(key);
      d.start = c.p;
      if (Scan s = skip_value(c); s != Scan::kOk) return s;
      d.end = c.p;
      d.filter = member;
      sel.deferred.push_back(std::move(d));
      continue;
    }
    Json value;
    sel.path.push_back(key);
    const Scan s = select_value(c, member, value, sel);
    sel.path.pop_back();
    if (s != Scan::kOk) return s;
    out[std::string(key)] = std::move(value);  // last one wins, as in parse_json
  }
}

Scan select_array(Cursor& c, const Filter& elements, Json& out, Selection& sel) {
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
    if (Scan s = select_value(c, &elements, value, sel); s != Scan::kOk) return s;
    out.push_back(std::move(value));
  }
}

Scan select_value(Cursor& c, const Filter* filter, Json& out, Selection& sel) {
  if (c.p >= c.end) return Scan::kIncomplete;
  if (filter != nullptr && *c.p == '{' && (filter->keep_rest || !filter->members.empty())) {
    return select_object(c, *filter, out, sel);
  }
  if (filter != nullptr && *c.p == '[' && filter->elements != nullptr) {
    return select_array(c, *filter->elements, out, sel);
  }
  return keep_value(c, out);
}

// Reads the deferred members into the object they belong to.
Scan read_deferred(const Selection& sel, const char* end, Json& out, Cursor& error) {
  for (const Deferred& d : sel.deferred) {
    Json* at = &out;
    for (size_t i = 0; at != nullptr && i + 1 < d.path.size(); ++i) {
      at = find_member(*at, d.path[i]);
      if (at != nullptr && !at->is_object()) at = nullptr;
    }
    if (at == nullptr) continue;  // its parent was replaced by a later member of that name
    Cursor c{d.start, end, nullptr, {}};
    Selection whole;
    Json value;
    if (Scan s = select_value(c, d.filter, value, whole); s != Scan::kOk) {
      error = c;
      return s;
    }
    (*at)[d.path.back()] = std::move(value);
  }
  return Scan::kOk;
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
    : file_(file), line_(first_line) {}

JsonObjectStream::JsonObjectStream(std::string_view text, int first_line)
    : data_(text), eof_(true), line_(first_line) {}

JsonObjectStream::~JsonObjectStream() = default;

int JsonObjectStream::line_of(size_t offset) const {
  offset = std::min(offset, data_.size());
  int64_t line = line_;
  if (offset > pos_) {
    line += static_cast<int64_t>(count_newlines(data_.data() + pos_, data_.data() + offset));
  }
  return line > INT32_MAX ? INT32_MAX : static_cast<int>(line);
}

bool JsonObjectStream::fill() {
  if (eof_ || file_ == nullptr) return false;
  // Drop what is done with (line_ counts it); keep the value being read, from pos_ on.
  buffer_.erase(0, pos_);
  pos_ = 0;
  if (buffer_.size() >= kMaxItemBytes) {
    error_ =
        StreamError{line_of(pos_), "an object larger than " + std::to_string(kMaxItemBytes >> 20) +
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
  error_ = StreamError{line_of(at), std::move(message)};
  state_ = State::kDone;
  return false;
}

// An item of the List (or of a top-level array): what the report reads of it; a Pod without a
// node read again with its placement; deferred members read when the item is wanted.
json_scan::Scan JsonObjectStream::read_item(json_scan::Cursor& c, Json& out) {
  const char* start = c.p;
  Selection sel;
  if (whole_) return select_value(c, &kWholeItem, out, sel);
  sel.defer = static_cast<bool>(interest_);
  Scan s = select_value(c, &kItem, out, sel);
  if (s == Scan::kOk && pending_pod(out)) {
    Cursor again{start, c.end, nullptr, {}};
    Selection whole;
    s = select_value(again, &kPendingPod, out, whole);
  } else if (s == Scan::kOk && !sel.deferred.empty() && interest_(out)) {
    s = read_deferred(sel, c.end, out, c);
  }
  return s;
}

// A member of a top-level object: kept in head_ as an item's would be; `items` set when it
// opens the List's items (c then after its '[').
json_scan::Scan JsonObjectStream::read_head_member(json_scan::Cursor& c, bool& items) {
  std::string scratch;
  std::string_view key;
  if (Scan s = read_member_name(c, key, scratch); s != Scan::kOk) return s;
  if (c.p >= c.end) return Scan::kIncomplete;
  if (key == "items" && *c.p == '[') {
    ++c.p;
    items = true;
    return Scan::kOk;
  }
  const Filter* member = whole_ ? kWholeItem.find(key, nullptr) : kItem.find(key, &kDrop);
  if (member == &kDrop) return skip_value(c);
  std::string name(key);
  Json value;
  Selection whole;
  const Scan s = select_value(c, member, value, whole);
  if (s == Scan::kOk) head_[name] = std::move(value);
  return s;
}

// At a value's closing bracket: true (and `out` set) when it ended a single object.
bool JsonObjectStream::close_value(Json& out, int& line) {
  ++pos_;
  first_ = false;
  if (state_ == State::kItems && !top_array_) {
    state_ = State::kTopMembers;
    return false;
  }
  const bool single = state_ == State::kTopMembers && !saw_items_;
  state_ = State::kTop;
  if (single) {
    out = std::move(head_);
    line = head_line_;
  }
  return single;
}

void JsonObjectStream::open_value(char ch) {
  top_array_ = ch == '[';
  state_ = top_array_ ? State::kItems : State::kTopMembers;
  first_ = true;
  saw_items_ = false;
  head_ = Json::object();
  head_line_ = static_cast<int>(std::min<int64_t>(line_, INT32_MAX));
  ++pos_;
}

bool JsonObjectStream::next(Json& out, int& line) {
  for (;;) {
    if (state_ == State::kDone || error_) return false;
    Cursor c{data_.data() + pos_, data_.data() + data_.size(), nullptr, {}};
    skip_ws(c);
    pos_ = static_cast<size_t>(c.p - data_.data());
    line_ += c.lines;  // line_ is pos_'s line from here on
    c.lines = 0;
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
      open_value(ch);
      continue;
    }
    const char close = state_ == State::kItems ? ']' : '}';
    if (ch == close) {
      if (close_value(out, line)) return true;
      continue;
    }
    if (!first_) {
      if (ch != ',') return fail(pos_, std::string("expected ',' or '") + close + "'");
      ++c.p;
      skip_ws(c);
    }
    const size_t start = static_cast<size_t>(c.p - data_.data());
    const int64_t start_line = line_ + c.lines;
    bool items = false;
    const Scan s = c.p >= c.end              ? Scan::kIncomplete
                   : state_ == State::kItems ? read_item(c, out)
                                             : read_head_member(c, items);
    if (s == Scan::kIncomplete) {
      if (fill()) continue;  // read on and scan the value again from its start
      if (error_) return false;
      return fail(start, "the JSON ends inside a value");
    }
    if (s == Scan::kInvalid) {
      return fail(static_cast<size_t>(c.error_at - data_.data()), "invalid JSON: " + c.message);
    }
    pos_ = static_cast<size_t>(c.p - data_.data());
    line_ += c.lines;
    if (items) {
      saw_items_ = true;
      state_ = State::kItems;
      first_ = true;
      continue;
    }
    first_ = false;
    if (state_ == State::kItems && out.is_object()) {
      line = static_cast<int>(std::min<int64_t>(start_line, INT32_MAX));
      return true;
    }
  }
}

}  // namespace gpuadmit::fleet
