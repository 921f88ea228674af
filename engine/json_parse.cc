#include "engine/json_parse.h"

#include <locale.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpuadmit {
namespace {

// One member of an object being built (the element type of Json::object_t).
using Member = std::pair<std::string, Json>;
static_assert(std::is_same_v<Member, Json::object_t::value_type>);

// The children of the open containers, waiting until their container closes and moves them into
// storage of exactly their count: array elements (16 bytes each) and object members (48), on two
// stacks. (One stack of members for both held a 1.4-million-element array as 100 MB of scratch,
// 150 MB while it grew, beside the array's own 22 MB.) Vectors, kept by the thread between
// parses: deques measured 23% more instructions per parse of a 4 KB review.
struct Scratch {
  std::vector<Json> elements;
  std::vector<Member> members;
  std::size_t peak = 0;  // children waiting at once, at most, in the last parse
};

// What a byte means inside a string. The UTF-8 classes follow nlohmann's lexer (scan_string),
// which accepts exactly the well-formed sequences of RFC 3629 §4 (no overlongs, no surrogates,
// nothing above U+10FFFF).
enum ByteClass : std::uint8_t {
  kPlain,      // U+0020..U+007F except '"' and '\\'
  kQuote,      // '"'
  kBackslash,  // '\\'
  kInvalid,    // control characters U+0000..U+001F, and bytes 80..C1, F5..FF
  kLead2,      // C2..DF: one continuation byte 80..BF
  kLeadE0,     // E0: A0..BF 80..BF
  kLead3,      // E1..EC, EE..EF: 80..BF 80..BF
  kLeadED,     // ED: 80..9F 80..BF
  kLeadF0,     // F0: 90..BF 80..BF 80..BF
  kLead4,      // F1..F3: 80..BF 80..BF 80..BF
  kLeadF4,     // F4: 80..8F 80..BF 80..BF
};

constexpr std::array<std::uint8_t, 256> make_byte_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    std::uint8_t k = kInvalid;
    if (c == '"') {
      k = kQuote;
    } else if (c == '\\') {
      k = kBackslash;
    } else if (c >= 0x20 && c <= 0x7F) {
      k = kPlain;
    } else if (c >= 0xC2 && c <= 0xDF) {
      k = kLead2;
    } else if (c == 0xE0) {
      k = kLeadE0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      k = kLead3;
    } else if (c == 0xED) {
      k = kLeadED;
    } else if (c == 0xF0) {
      k = kLeadF0;
    } else if (c >= 0xF1 && c <= 0xF3) {
      k = kLead4;
    } else if (c == 0xF4) {
      k = kLeadF4;
    }
    t[c] = k;
  }
  return t;
}
constexpr std::array<std::uint8_t, 256> kByteClass = make_byte_classes();

// True when any of the 8 bytes of `w` is not kPlain (a quote, a backslash, a control character
// or a non-ASCII byte). Exact as a boolean: the lowest such byte always sets its high bit.
inline bool has_special_byte(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  const std::uint64_t below_space = (w - kOnes * 0x20) & ~w;
  const std::uint64_t is_quote = (quote - kOnes) & ~quote;
  const std::uint64_t is_backslash = (backslash - kOnes) & ~backslash;
  return ((below_space | is_quote | is_backslash | w) & kHighs) != 0;
}

// Doubles 1e0..1e22 are exact, so one multiplication or division by them is correctly rounded.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// nlohmann converts float tokens with std::strtod after swapping '.' for the locale's decimal
// point, i.e. it is strtod in the "C" locale whatever the process locale is.
double strtod_c(const char* first, const char* last) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  char small[128];
  std::string large;
  const auto n = static_cast<std::size_t>(last - first);
  const char* text = small;
  if (n < sizeof small) {
    std::memcpy(small, first, n);
    small[n] = '\0';
  } else {
    large.assign(first, n);
    text = large.c_str();
  }
  return strtod_l(text, nullptr, c_locale);
}

// An RFC 8259 §6 number token, scanned: its sign, its integer part (when it fits in 64 bits),
// and for Clinger's fast path (a decimal mantissa ≤ 2^53 scaled by 10^±22 at most converts
// exactly) its digits and decimal exponent while they stay exact.
struct NumberScan {
  bool negative = false;
  std::uint64_t mantissa = 0;  // the integer part
  bool overflow = false;       // the integer part does not fit in 64 bits
  bool is_float = false;       // a fraction or an exponent
  bool fast = false;           // digits × 10^exponent is exact
  std::uint64_t digits = 0;
  std::int64_t exponent = 0;
};

// Where an open object sits in an AdmissionReview, for parse_admission_review_json: the way to
// the two metadata objects whose managedFields are checked and dropped.
enum class ReviewSite : std::uint8_t { kNone, kReview, kRequest, kObject, kMetadata };

class Parser {
 public:
  Parser(std::string_view text, Scratch& scratch, std::size_t max_depth, bool review)
      : p_(reinterpret_cast<const unsigned char*>(text.data())),
        end_(p_ + text.size()),
        scratch_(scratch),
        max_depth_(max_depth),
        next_site_(review ? ReviewSite::kReview : ReviewSite::kNone) {}

  bool parse(Json& root);
  bool too_deep() const { return too_deep_; }

 private:
  // Where a value goes: the root, or the scratch slot of an object member (its index) or of an
  // array element (its index with kElement set).
  static constexpr std::size_t kRoot = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t kElement = std::size_t{1} << 62;
  // Past this many members an object's repeated-key check uses a hash index instead of a
  // linear scan: a 3 MiB body of 250,000 keys took 80 s with the scan (quadratic), not 20 ms.
  static constexpr std::size_t kLinearKeyScan = 16;
  using KeyIndex = std::unordered_multimap<std::size_t, std::size_t>;  // key hash → scratch index
  struct Frame {
    std::size_t base;  // index of the container's first child in its scratch stack
    std::size_t slot;  // where the finished container goes
    bool object;
    ReviewSite site = ReviewSite::kNone;
    std::unique_ptr<KeyIndex> keys = nullptr;  // built once the object is large
  };

  // The scratch index of the open object's member named `key`, or kRoot when there is none.
  std::size_t find_member_slot(Frame& frame, std::string_view key);

  Json& slot_value(std::size_t slot, Json& root) {
    if (slot == kRoot) return root;
    if ((slot & kElement) != 0) return scratch_.elements[slot & ~kElement];
    return scratch_.members[slot].second;
  }
  void note_waiting() {
    scratch_.peak = std::max(scratch_.peak, scratch_.elements.size() + scratch_.members.size());
  }

  // RFC 8259 §2 whitespace, the set nlohmann's skip_whitespace skips.
  void skip_whitespace() {
    while (p_ != end_ && *p_ <= ' ' && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  bool literal(const char* word, std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  // parse()'s steps. A value into `slot`: a '{' or '[' opens a frame (`opened`), unless the
  // container closes at once.
  bool parse_value(std::size_t slot, Json& root, bool& opened);
  bool open_container(std::size_t slot, Json& root, bool& opened);
  // After a value (or just after '{' / '['): closes the containers that end here and sets
  // `slot` to where the next value goes.
  enum class Next { kValue, kEnd, kError };
  Next next_slot(Json& root, bool opened, std::size_t& slot);
  // An object member's `"key" :`; `slot` is its value's place (a repeated key's old one).
  // kSkipped: the member was a review's managedFields, its value checked and dropped.
  enum class MemberSlot { kValue, kSkipped, kError };
  MemberSlot member_slot(std::size_t& slot);
  // The site of the member `key` of an object at `parent`.
  static ReviewSite child_site(ReviewSite parent, std::string_view key);
  // Checks the value at p_ exactly as parse_value and the frames after it would, depth limit
  // included, and builds nothing.
  bool skip_value();
  // `"key" :` at p_ (whitespace around it skipped); `key` views the key's value.
  bool read_key(std::string_view& key);
  bool skip_scalar();  // a string, literal or number at p_

  bool parse_string(std::string_view& out);
  bool unescape(const unsigned char*& p, std::string& out);
  bool unescape_unicode(const unsigned char*& p, std::string& out);
  bool skip_utf8(const unsigned char*& p, std::uint8_t cls);
  int hex4(const unsigned char* p) const;
  bool scan_number(NumberScan& n);
  bool parse_number(Json& target);
  void close(const Frame& frame, Json& root);

  const unsigned char* p_;
  const unsigned char* const end_;
  Scratch& scratch_;
  const std::size_t max_depth_;
  bool too_deep_ = false;
  ReviewSite next_site_;       // the site of the next container opened
  std::string unescaped_;      // the value of the last string that had escapes
  std::vector<Frame> frames_;  // the open containers, innermost last
  std::string skipped_;        // skip_value's open containers: their closing bytes
};

// The first byte at or after `p` that is not kPlain, or `end`.
inline const unsigned char* skip_plain(const unsigned char* p, const unsigned char* end) {
#ifdef __SSE2__
  // One signed compare finds both control characters (0..1F) and non-ASCII bytes (negative).
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmplt_epi8(v, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (end - p >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    if (has_special_byte(w)) break;
    p += 8;
  }
  while (p != end && kByteClass[*p] == kPlain) ++p;
  return p;
}

// p_ is at the opening quote; on success `out` views the string's value: the input itself when
// the string has no escapes (the common case: one copy, by the caller), else `unescaped_`.
bool Parser::parse_string(std::string_view& out) {
  const unsigned char* p = p_ + 1;
  const unsigned char* run = p;
  bool assembled = false;  // unescaped_ holds the string up to `run`
  for (;;) {
    p = skip_plain(p, end_);
    if (p == end_) return false;  // missing closing quote
    const std::uint8_t cls = kByteClass[*p];
    switch (cls) {
      case kPlain:  // unreachable: skip_plain stops at other bytes only
        ++p;
        break;
      case kQuote:
        if (assembled) {
          unescaped_.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
          out = unescaped_;
        } else {
          out = std::string_view(reinterpret_cast<const char*>(run),
                                 static_cast<std::size_t>(p - run));
        }
        p_ = p + 1;
        return true;
      case kBackslash:
        if (!assembled) {
          unescaped_.clear();
          assembled = true;
        }
        unescaped_.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
        ++p;
        if (!unescape(p, unescaped_)) return false;
        run = p;
        break;
      case kInvalid:
        return false;
      default:
        if (!skip_utf8(p, cls)) return false;
        break;
    }
  }
}

// The 4 hex digits of a \u escape as nlohmann's get_codepoint reads them, or -1.
int Parser::hex4(const unsigned char* p) const {
  if (end_ - p < 4) return -1;
  int cp = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned char c = p[i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return -1;
    }
    cp = (cp << 4) | d;
  }
  return cp;
}

// p is just after a backslash. RFC 8259 §7 escapes; a high surrogate must be followed by a \u
// low surrogate and a lone low surrogate is an error, as in nlohmann's scan_string.
bool Parser::unescape(const unsigned char*& p, std::string& out) {
  if (p == end_) return false;
  switch (*p++) {
    case '"':
      out += '"';
      return true;
    case '\\':
      out += '\\';
      return true;
    case '/':
      out += '/';
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'u':
      return unescape_unicode(p, out);
    default:
      return false;
  }
}

// p is just after `\u`: four hex digits, a surrogate pair's second `\uXXXX` too, as UTF-8.
bool Parser::unescape_unicode(const unsigned char*& p, std::string& out) {
  int cp = hex4(p);
  if (cp < 0) return false;
  p += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (end_ - p < 2 || p[0] != '\\' || p[1] != 'u') return false;
    const int low = hex4(p + 2);
    if (low < 0xDC00 || low > 0xDFFF) return false;
    p += 6;
    cp = ((cp - 0xD800) << 10) + (low - 0xDC00) + 0x10000;
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return false;
  }
  const auto u = static_cast<unsigned>(cp);
  if (u < 0x80) {
    out += static_cast<char>(u);
  } else if (u < 0x800) {
    const char b[2] = {static_cast<char>(0xC0 | (u >> 6)), static_cast<char>(0x80 | (u & 0x3F))};
    out.append(b, 2);
  } else if (u < 0x10000) {
    const char b[3] = {static_cast<char>(0xE0 | (u >> 12)),
                       static_cast<char>(0x80 | ((u >> 6) & 0x3F)),
                       static_cast<char>(0x80 | (u & 0x3F))};
    out.append(b, 3);
  } else {
    const char b[4] = {
        static_cast<char>(0xF0 | (u >> 18)), static_cast<char>(0x80 | ((u >> 12) & 0x3F)),
        static_cast<char>(0x80 | ((u >> 6) & 0x3F)), static_cast<char>(0x80 | (u & 0x3F))};
    out.append(b, 4);
  }
  return true;
}

// p is at a UTF-8 lead byte of class `cls`; moves past the sequence if it is well-formed.
bool Parser::skip_utf8(const unsigned char*& p, std::uint8_t cls) {
  std::size_t n = 0;                   // continuation bytes
  unsigned char lo = 0x80, hi = 0xBF;  // range of the first continuation byte
  switch (cls) {
    case kLead2:
      n = 1;
      break;
    case kLeadE0:
      n = 2;
      lo = 0xA0;
      break;
    case kLead3:
      n = 2;
      break;
    case kLeadED:
      n = 2;
      hi = 0x9F;
      break;
    case kLeadF0:
      n = 3;
      lo = 0x90;
      break;
    case kLead4:
      n = 3;
      break;
    case kLeadF4:
      n = 3;
      hi = 0x8F;
      break;
    default:
      return false;
  }
  if (static_cast<std::size_t>(end_ - p) <= n) return false;
  if (p[1] < lo || p[1] > hi) return false;
  for (std::size_t i = 2; i <= n; ++i) {
    if (p[i] < 0x80 || p[i] > 0xBF) return false;
  }
  p += n + 1;
  return true;
}

// Scans the number at p_ and moves past it; false when it is not one.
bool Parser::scan_number(NumberScan& n) {
  constexpr std::uint64_t kMax53 = std::uint64_t{1} << 53;
  const unsigned char* p = p_;
  n.negative = *p == '-';
  if (n.negative) ++p;
  if (p == end_ || *p < '0' || *p > '9') return false;
  if (*p == '0') {
    ++p;  // a leading zero stands alone ("01" fails at the next token)
  } else {
    while (p != end_ && *p >= '0' && *p <= '9') {
      const unsigned d = *p - '0';
      if (n.mantissa > (std::numeric_limits<std::uint64_t>::max() - d) / 10) n.overflow = true;
      if (!n.overflow) n.mantissa = n.mantissa * 10 + d;
      ++p;
    }
  }
  n.fast = !n.overflow && n.mantissa <= kMax53;
  n.digits = n.mantissa;
  if (p != end_ && *p == '.') {
    n.is_float = true;
    ++p;
    if (p == end_ || *p < '0' || *p > '9') return false;
    for (; p != end_ && *p >= '0' && *p <= '9'; ++p) {
      if (!n.fast) continue;
      n.digits = n.digits * 10 + static_cast<unsigned>(*p - '0');
      --n.exponent;
      if (n.digits > kMax53) n.fast = false;
    }
  }
  if (p != end_ && (*p == 'e' || *p == 'E')) {
    n.is_float = true;
    ++p;
    bool exp_negative = false;
    if (p != end_ && (*p == '+' || *p == '-')) {
      exp_negative = *p == '-';
      ++p;
    }
    if (p == end_ || *p < '0' || *p > '9') return false;
    std::int64_t e = 0;
    for (; p != end_ && *p >= '0' && *p <= '9'; ++p) {
      if (e < 100000) e = e * 10 + (*p - '0');  // beyond that only strtod's answer matters
    }
    n.exponent += exp_negative ? -e : e;
  }
  p_ = p;
  return true;
}

// Typed as nlohmann's scan_number types numbers: no fraction or exponent → number_unsigned (no
// '-') or number_integer ('-', "-0" included) when strtoull / strtoll would not overflow, else
// number_float of the whole token; a float that is not finite is an error (nlohmann's parser:
// "number overflow").
bool Parser::parse_number(Json& target) {
  const unsigned char* const start = p_;
  NumberScan n;
  if (!scan_number(n)) return false;
  if (!n.is_float) {
    if (!n.negative && !n.overflow) {
      target = static_cast<Json::number_unsigned_t>(n.mantissa);
      return true;
    }
    constexpr std::uint64_t kMinMagnitude = std::uint64_t{1} << 63;  // |INT64_MIN|
    if (n.negative && !n.overflow && n.mantissa <= kMinMagnitude) {
      target = n.mantissa == kMinMagnitude ? std::numeric_limits<Json::number_integer_t>::min()
                                           : -static_cast<Json::number_integer_t>(n.mantissa);
      return true;
    }
  } else if (n.fast && n.exponent >= -22 && n.exponent <= 22) {
    double v = static_cast<double>(n.digits);
    v = n.exponent >= 0 ? v * kPow10[n.exponent] : v / kPow10[-n.exponent];
    target = n.negative ? -v : v;
    return true;
  }
  const double v =
      strtod_c(reinterpret_cast<const char*>(start), reinterpret_cast<const char*>(p_));
  if (!std::isfinite(v)) return false;
  target = v;
  return true;
}

// Moves the children of `frame` from their scratch stack into a container of exactly their count.
void Parser::close(const Frame& frame, Json& root) {
  Json value(frame.object ? Json::value_t::object : Json::value_t::array);
  const auto base = static_cast<std::ptrdiff_t>(frame.base);
  if (frame.object) {
    std::vector<Member>& stack = scratch_.members;
    auto& members = value.get_ref<Json::object_t&>();
    members.reserve(stack.size() - frame.base);
    for (auto it = stack.begin() + base; it != stack.end(); ++it) members.push_back(std::move(*it));
    stack.erase(stack.begin() + base, stack.end());
  } else {
    std::vector<Json>& stack = scratch_.elements;
    auto& elements = value.get_ref<Json::array_t&>();
    elements.reserve(stack.size() - frame.base);
    for (auto it = stack.begin() + base; it != stack.end(); ++it)
      elements.push_back(std::move(*it));
    stack.erase(stack.begin() + base, stack.end());
  }
  slot_value(frame.slot, root) = std::move(value);
}

std::size_t Parser::find_member_slot(Frame& frame, std::string_view key) {
  const std::vector<Member>& members = scratch_.members;
  if (!frame.keys && members.size() - frame.base <= kLinearKeyScan) {
    for (std::size_t i = frame.base; i < members.size(); ++i) {
      if (members[i].first == key) return i;
    }
    return kRoot;
  }
  const std::hash<std::string_view> hash;
  if (!frame.keys) {
    frame.keys = std::make_unique<KeyIndex>();
    for (std::size_t i = frame.base; i < members.size(); ++i) {
      frame.keys->emplace(hash(members[i].first), i);
    }
  }
  const auto [first, last] = frame.keys->equal_range(hash(key));
  for (auto it = first; it != last; ++it) {
    if (members[it->second].first == key) return it->second;
  }
  return kRoot;
}

// An explicit stack instead of recursion: deep input cannot overflow the C++ stack.
bool Parser::parse(Json& root) {
  // nlohmann's lexer skips one UTF-8 BOM at the very start (skip_bom).
  if (end_ - p_ >= 3 && p_[0] == 0xEF && p_[1] == 0xBB && p_[2] == 0xBF) p_ += 3;
  frames_.clear();
  std::size_t slot = kRoot;
  for (;;) {
    bool opened = false;
    if (!parse_value(slot, root, opened)) return false;
    switch (next_slot(root, opened, slot)) {
      case Next::kValue:
        break;
      case Next::kEnd:
        return true;
      case Next::kError:
        return false;
    }
  }
}

bool Parser::parse_value(std::size_t slot, Json& root, bool& opened) {
  skip_whitespace();
  if (p_ == end_) return false;
  switch (*p_) {
    case '{':
    case '[':
      return open_container(slot, root, opened);
    case '"': {
      std::string_view sv;
      if (!parse_string(sv)) return false;
      slot_value(slot, root) = std::string(sv);
      return true;
    }
    case 't':
      if (!literal("true", 4)) return false;
      slot_value(slot, root) = true;
      return true;
    case 'f':
      if (!literal("false", 5)) return false;
      slot_value(slot, root) = false;
      return true;
    case 'n':
      if (!literal("null", 4)) return false;
      slot_value(slot, root) = nullptr;
      return true;
    default:
      return parse_number(slot_value(slot, root));
  }
}

bool Parser::open_container(std::size_t slot, Json& root, bool& opened) {
  const bool object = *p_ == '{';
  ++p_;
  if (frames_.size() == max_depth_) {
    too_deep_ = true;
    return false;
  }
  frames_.push_back(
      {object ? scratch_.members.size() : scratch_.elements.size(), slot, object, next_site_});
  next_site_ = ReviewSite::kNone;
  opened = true;
  skip_whitespace();
  if (p_ != end_ && *p_ == (object ? '}' : ']')) {
    ++p_;
    close(frames_.back(), root);
    frames_.pop_back();
    opened = false;
  }
  return true;
}

Parser::Next Parser::next_slot(Json& root, bool opened, std::size_t& slot) {
  bool expect_member = opened && frames_.back().object;
  bool expect_element = opened && !frames_.back().object;
  for (;;) {
    while (!expect_member && !expect_element) {
      skip_whitespace();
      if (frames_.empty()) {
        // nlohmann's lexer reads a NUL byte as the end of input.
        return p_ == end_ || *p_ == '\0' ? Next::kEnd : Next::kError;
      }
      if (p_ == end_) return Next::kError;
      const Frame& top = frames_.back();
      if (*p_ == ',') {
        ++p_;
        (top.object ? expect_member : expect_element) = true;
      } else if (*p_ == (top.object ? '}' : ']')) {
        ++p_;
        close(top, root);
        frames_.pop_back();
      } else {
        return Next::kError;
      }
    }
    if (expect_element) {
      next_site_ = ReviewSite::kNone;
      scratch_.elements.emplace_back();
      slot = (scratch_.elements.size() - 1) | kElement;
      note_waiting();
      return Next::kValue;
    }
    switch (member_slot(slot)) {
      case MemberSlot::kValue:
        return Next::kValue;
      case MemberSlot::kError:
        return Next::kError;
      case MemberSlot::kSkipped:  // as after any value: a ',' or the object's end comes next
        expect_member = false;
        break;
    }
  }
}

// A repeated key keeps its first position and takes the last value, as nlohmann's
// json_sax_dom_parser (object->operator[](key), then assignment).
Parser::MemberSlot Parser::member_slot(std::size_t& slot) {
  std::string_view key;
  if (!read_key(key)) return MemberSlot::kError;
  if (frames_.back().site != ReviewSite::kNone) {
    if (frames_.back().site == ReviewSite::kMetadata && key == "managedFields") {
      return skip_value() ? MemberSlot::kSkipped : MemberSlot::kError;
    }
    next_site_ = child_site(frames_.back().site, key);
  }
  slot = find_member_slot(frames_.back(), key);
  if (slot == kRoot) {
    scratch_.members.emplace_back(std::piecewise_construct, std::forward_as_tuple(key),
                                  std::forward_as_tuple());
    slot = scratch_.members.size() - 1;
    note_waiting();
    if (KeyIndex* index = frames_.back().keys.get()) {
      index->emplace(std::hash<std::string_view>()(key), slot);
    }
  }
  return MemberSlot::kValue;
}

ReviewSite Parser::child_site(ReviewSite parent, std::string_view key) {
  switch (parent) {
    case ReviewSite::kReview:
      return key == "request" ? ReviewSite::kRequest : ReviewSite::kNone;
    case ReviewSite::kRequest:
      return key == "object" || key == "oldObject" ? ReviewSite::kObject : ReviewSite::kNone;
    case ReviewSite::kObject:
      return key == "metadata" ? ReviewSite::kMetadata : ReviewSite::kNone;
    default:
      return ReviewSite::kNone;
  }
}

bool Parser::read_key(std::string_view& key) {
  skip_whitespace();
  if (p_ == end_ || *p_ != '"') return false;
  if (!parse_string(key)) return false;
  skip_whitespace();
  if (p_ == end_ || *p_ != ':') return false;
  ++p_;
  return true;
}

// A string, literal or number, checked as parse_value checks it.
bool Parser::skip_scalar() {
  switch (*p_) {
    case '"': {
      std::string_view ignored;
      return parse_string(ignored);
    }
    case 't':
      return literal("true", 4);
    case 'f':
      return literal("false", 5);
    case 'n':
      return literal("null", 4);
    default: {
      Json number;  // a number holds no allocation
      return parse_number(number);
    }
  }
}

// The grammar of parse_value, open_container and next_slot without their frames: the skipped
// value's open containers are only their closing bytes in `skipped_`, and count against the depth
// limit as frames would.
bool Parser::skip_value() {
  skipped_.clear();
  for (;;) {
    skip_whitespace();
    if (p_ == end_) return false;
    switch (*p_) {
      case '{':
      case '[': {
        const bool object = *p_ == '{';
        ++p_;
        if (frames_.size() + skipped_.size() == max_depth_) {
          too_deep_ = true;
          return false;
        }
        skipped_.push_back(object ? '}' : ']');
        skip_whitespace();
        if (p_ != end_ && *p_ == skipped_.back()) {
          ++p_;
          skipped_.pop_back();
          break;
        }
        std::string_view key;
        if (object && !read_key(key)) return false;
        continue;  // the container's first value
      }
      default:
        if (!skip_scalar()) return false;
        break;
    }
    // After a value: the containers that close here, then a ',' and the next value, or the end.
    for (;;) {
      if (skipped_.empty()) return true;
      skip_whitespace();
      if (p_ == end_) return false;
      if (*p_ == skipped_.back()) {
        ++p_;
        skipped_.pop_back();
        continue;
      }
      if (*p_ != ',') return false;
      ++p_;
      std::string_view key;
      if (skipped_.back() == '}' && !read_key(key)) return false;
      break;
    }
  }
}

}  // namespace

namespace {

JsonParseResult parse(std::string_view text, Json& out, std::size_t max_depth, bool review) {
  // The children of open containers wait here; reused across calls on the same thread.
  thread_local Scratch scratch;
  scratch.peak = 0;
  Parser parser(text, scratch, max_depth, review);
  const bool ok = parser.parse(out);
  if (scratch.peak > 4096) {
    scratch = Scratch();  // after a huge document: its capacity goes too
  } else {
    scratch.elements.clear();
    scratch.members.clear();
  }
  if (ok) return JsonParseResult::kOk;
  out = Json(Json::value_t::discarded);
  return parser.too_deep() ? JsonParseResult::kTooDeep : JsonParseResult::kInvalid;
}

}  // namespace

JsonParseResult parse_json(std::string_view text, Json& out, std::size_t max_depth) {
  return parse(text, out, max_depth, /*review=*/false);
}

JsonParseResult parse_admission_review_json(std::string_view text, Json& out,
                                            std::size_t max_depth) {
  return parse(text, out, max_depth, /*review=*/true);
}

namespace {

constexpr std::size_t kAllocationOverhead = 16;
constexpr std::size_t kSsoCapacity = 15;    // libstdc++'s std::string keeps 15 characters inline
constexpr std::size_t kKeyIndexBytes = 48;  // an unordered_multimap node and its bucket, per key

// glibc serves allocations from 128 KiB up with mmap, rounded up to whole pages.
std::size_t allocation_bytes(std::size_t size) {
  return size + kAllocationOverhead + (size >= 128 * 1024 ? 4096 : 0);
}

std::size_t string_bytes(std::size_t length) {
  return length > kSsoCapacity ? allocation_bytes(length + 1) : 0;
}

// The text's structure as parse_json would build it, counting bytes instead of building.
class PeakEstimate {
 public:
  PeakEstimate(std::string_view text, std::size_t max_depth)
      : p_(reinterpret_cast<const unsigned char*>(text.data())),
        end_(p_ + text.size()),
        max_depth_(max_depth) {}

  std::size_t run() {
    while (p_ != end_) {
      const unsigned char c = *p_;
      if (c == '{' || c == '[') {
        value(sizeof(Json::array_t) + kAllocationOverhead);
        if (open_.size() == max_depth_) break;  // the parser stops here
        open_.push_back({c == '{', 0});
        deepest_ = std::max(deepest_, open_.size());
        key_next_ = c == '{';
        ++p_;
      } else if (c == '}' || c == ']') {
        if (!open_.empty()) close();
        ++p_;
      } else if (c == '"') {
        string();
      } else if (c == ',') {
        key_next_ = !open_.empty() && open_.back().object;
        ++p_;
      } else if (c == ':' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        ++p_;
      } else {
        value(0);  // a number or a literal: its slot only
        while (p_ != end_ && std::strchr(",]} \n\r\t:", *p_) == nullptr && *p_ != '\0') ++p_;
        if (p_ != end_ && *p_ == '\0') break;
      }
    }
    // While parsing: each scratch stack, a vector grown by doubling (vector_peak); the key
    // index and its buckets, twice while they rehash; the unescaped copy of the longest string
    // with escapes; the parser's stack of open containers and its fixed allocations (2 KiB).
    const std::size_t parsing = vector_peak(elements_.peak, sizeof(Json)) +
                                vector_peak(members_.peak, sizeof(std::pair<std::string, Json>)) +
                                2 * index_.peak + allocation_bytes(longest_string_) +
                                deepest_ * 2 * 48 + 2048;
    return tree_ + std::max(parsing, destroy_stack_bytes());
  }

 private:
  struct Open {
    bool object;
    std::size_t children;
    std::size_t deepest_child = 0;  // the largest destroy_depth of its container children
  };

  // nlohmann's basic_json destructor frees a tree without recursion: it moves the root's
  // children into a vector reserved for them, then pops one at a time and pushes the children of
  // each container it pops (json_value::destroy, nlohmann 3.11). The vector then holds at most
  // `root_depth_` values, `destroy_depth` of the root: a container's children minus the one
  // popped, plus the deepest of that one. Past the reservation it grows by doubling, the old
  // buffer alive while the new one fills.
  static std::size_t destroy_depth(const Open& o) {
    return o.children == 0 ? 0 : o.children - 1 + std::max<std::size_t>(1, o.deepest_child);
  }
  std::size_t destroy_stack_bytes() const {
    if (root_depth_ <= root_children_) return allocation_bytes(root_children_ * sizeof(Json));
    std::size_t capacity = std::max<std::size_t>(root_children_, 1);
    while (capacity < root_depth_) capacity *= 2;
    return allocation_bytes(capacity * sizeof(Json)) +
           allocation_bytes(capacity / 2 * sizeof(Json));
  }

  // A value in the open container (or the root), with `own` bytes of its own.
  void value(std::size_t own) {
    tree_ += own;
    if (open_.empty()) {
      tree_ += sizeof(Json);
      return;
    }
    Open& top = open_.back();
    if (top.object) return;  // its member was counted with the key
    ++top.children;
    tree_ += sizeof(Json);
    elements_.add(sizeof(Json));
  }

  void key(std::size_t length) {
    Open& top = open_.back();
    ++top.children;
    const std::size_t member = sizeof(std::pair<std::string, Json>) + string_bytes(length);
    tree_ += member;
    members_.add(sizeof(std::pair<std::string, Json>));
    if (top.children == 17) index_.add(17 * kKeyIndexBytes);
    if (top.children > 17) index_.add(kKeyIndexBytes);
    key_next_ = false;
  }

  // A vector of `slot`-byte elements that held `peak_bytes` at most, grown by doubling from
  // empty: its capacity is the power of two at or above its peak count, and while it grew to
  // that, the buffer of half the size was alive too.
  static std::size_t vector_peak(std::size_t peak_bytes, std::size_t slot) {
    if (peak_bytes == 0) return 0;
    const std::size_t capacity = std::bit_ceil(peak_bytes / slot) * slot;
    return allocation_bytes(capacity) + allocation_bytes(capacity / 2);
  }

  // Bytes on one of the parser's scratch stacks, and their peak.
  struct Waiting {
    std::size_t now = 0, peak = 0;
    void add(std::size_t bytes) {
      now += bytes;
      peak = std::max(peak, now);
    }
    void remove(std::size_t bytes) { now -= std::min(now, bytes); }
  };

  void close() {
    const Open top = open_.back();
    open_.pop_back();
    if (open_.empty()) {
      root_children_ = top.children;
      root_depth_ = destroy_depth(top);
    } else {
      open_.back().deepest_child = std::max(open_.back().deepest_child, destroy_depth(top));
    }
    const std::size_t slot = top.object ? sizeof(std::pair<std::string, Json>) : sizeof(Json);
    (top.object ? members_ : elements_).remove(top.children * slot);
    if (top.object && top.children > 16) index_.remove(top.children * kKeyIndexBytes);
    if (top.children > 0) tree_ += allocation_bytes(top.children * slot) - top.children * slot;
    key_next_ = false;
  }

  // At the opening quote: the string's raw length (escapes only shorten what is built).
  void string() {
    const unsigned char* start = ++p_;
    bool escapes = false;
    for (;;) {
      p_ = skip_plain(p_, end_);
      if (p_ == end_) break;
      if (*p_ == '"') break;
      if (*p_ == '\\') {
        escapes = true;
        p_ = end_ - p_ >= 2 ? p_ + 2 : end_;
        continue;
      }
      ++p_;  // control or non-ASCII bytes: the parser checks them, the estimate does not
    }
    const auto length = static_cast<std::size_t>(p_ - start);
    if (p_ != end_) ++p_;
    if (escapes) longest_string_ = std::max(longest_string_, length);
    if (!open_.empty() && open_.back().object && key_next_) {
      key(length);
    } else {
      value(sizeof(std::string) + kAllocationOverhead + string_bytes(length));
    }
  }

  const unsigned char* p_;
  const unsigned char* const end_;
  const std::size_t max_depth_;
  std::vector<Open> open_;
  bool key_next_ = false;
  std::size_t tree_ = 0, longest_string_ = 0;
  Waiting elements_, members_, index_;
  std::size_t root_children_ = 0, root_depth_ = 0, deepest_ = 0;
};

}  // namespace

std::size_t parse_json_peak_bytes(std::string_view text, std::size_t max_depth) {
  return PeakEstimate(text, std::min<std::size_t>(max_depth, 1u << 20)).run();
}

bool parse_json(std::string_view text, Json& out) {
  return parse_json(text, out, std::numeric_limits<std::size_t>::max()) == JsonParseResult::kOk;
}

}  // namespace gpuadmit
