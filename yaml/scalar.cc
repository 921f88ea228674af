#include "yaml/scalar.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace gpuadmit::yaml {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_timestamp_date(std::string_view s) {
  // go-yaml v2 parseTimestamp: "2006-1-2" plus optional time. Such values stay strings when
  // decoded into interface{}, so only their detection matters (before integer parsing).
  size_t i = 0;
  auto digits = [&](size_t min, size_t max) {
    size_t start = i;
    while (i < s.size() && is_digit(s[i]) && i - start < max) ++i;
    return i - start >= min;
  };
  if (!digits(4, 4) || i >= s.size() || s[i] != '-') return false;
  ++i;
  if (!digits(1, 2) || i >= s.size() || s[i] != '-') return false;
  ++i;
  return digits(1, 2);
}

// YAML 1.1 float syntax as go-yaml v2's yamlStyleFloat:
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool is_yaml_style_float(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
  } else {
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && is_digit(s[i])) ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Go's strconv.ParseUint(s, 0, 64) on an unsigned body (underscores already removed).
bool parse_go_uint(std::string_view s, uint64_t& out) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16;
      s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8;
      s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = digit_value(c);
    if (d >= base) return false;
    if (v > (std::numeric_limits<uint64_t>::max() - d) / base) return false;
    v = v * base + d;
  }
  out = v;
  return true;
}

// go-yaml v2 resolve() for plain scalars starting with a digit or a sign: timestamp (string),
// int, uint, YAML-style float, 0b binary; else string.
Json resolve_numeric(std::string_view in) {
  if (is_timestamp_date(in)) return std::string(in);
  std::string plain;
  plain.reserve(in.size());
  for (char c : in) {
    if (c != '_') plain += c;
  }
  std::string_view body = plain;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  uint64_t u = 0;
  if (!body.empty() && body[0] != '+' && body[0] != '-' && parse_go_uint(body, u)) {
    if (!negative) {
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return static_cast<int64_t>(u);
      }
      return u;
    }
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return static_cast<int64_t>(0 - u);
    }
  }
  if (is_yaml_style_float(plain)) {
    errno = 0;
    double d = std::strtod(plain.c_str(), nullptr);
    if (errno != ERANGE && std::isfinite(d)) return normalize_number(d);
  }
  return std::string(in);
}

bool equals_any(std::string_view s, std::initializer_list<std::string_view> options) {
  for (std::string_view o : options) {
    if (s == o) return true;
  }
  return false;
}

// The length of the unsafe character (has_unsafe_unicode) at s[i] and its code point, or 0.
size_t unsafe_at(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (b(0) == 0x7f) {
    cp = 0x7f;
    return 1;
  }
  if (b(0) == 0xc2 && i + 1 < s.size() && b(1) >= 0x80 && b(1) <= 0x9f) {
    cp = b(1);
    return 2;
  }
  if (b(0) == 0xe2 && i + 2 < s.size() && b(1) == 0x80 && (b(2) == 0xa8 || b(2) == 0xa9)) {
    cp = 0x2000u | (b(2) - 0x80u);
    return 3;
  }
  if (b(0) == 0xef && i + 2 < s.size() && b(1) == 0xbb && b(2) == 0xbf) {
    cp = 0xfeff;
    return 3;
  }
  return 0;
}

}  // namespace

bool has_unsafe_unicode(std::string_view s) {
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c == 0x7f || c == 0xc2 || c == 0xe2 || c == 0xef) && unsafe_at(s, i, cp) > 0) return true;
  }
  return false;
}

std::string escape_unsafe_unicode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  static const char* kHex = "0123456789abcdef";
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t length = unsafe_at(s, i, cp);
    if (length == 0) {
      out += s[i++];
      continue;
    }
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
    i += length;
  }
  return out;
}

Json normalize_number(double d) {
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e21) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<int64_t>(d);
    if (d >= 0 && d < 18446744073709551616.0) return static_cast<uint64_t>(d);
  }
  return d;
}

namespace {

// go-yaml v2's words for null and the booleans (YAML 1.1), by their first character.
enum class Word { kNone, kNull, kTrue, kFalse };

Word yaml_word(std::string_view s) {
  if (s.empty() || s.size() > 5) return Word::kNone;
  switch (s[0]) {
    case '~':
      return s == "~" ? Word::kNull : Word::kNone;
    case 'n':
    case 'N':
      if (equals_any(s, {"null", "Null", "NULL"})) return Word::kNull;
      return equals_any(s, {"n", "N", "no", "No", "NO"}) ? Word::kFalse : Word::kNone;
    case 'y':
    case 'Y':
      return equals_any(s, {"y", "Y", "yes", "Yes", "YES"}) ? Word::kTrue : Word::kNone;
    case 't':
    case 'T':
      return equals_any(s, {"true", "True", "TRUE"}) ? Word::kTrue : Word::kNone;
    case 'f':
    case 'F':
      return equals_any(s, {"false", "False", "FALSE"}) ? Word::kFalse : Word::kNone;
    case 'o':
    case 'O':
      if (equals_any(s, {"on", "On", "ON"})) return Word::kTrue;
      return equals_any(s, {"off", "Off", "OFF"}) ? Word::kFalse : Word::kNone;
    default:
      return Word::kNone;
  }
}

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

Json resolve_plain_scalar(std::string_view s) {
  if (s.empty()) return nullptr;
  switch (yaml_word(s)) {
    case Word::kNull:
      return nullptr;
    case Word::kTrue:
      return true;
    case Word::kFalse:
      return false;
    case Word::kNone:
      break;
  }
  switch (s[0]) {
    case '.': {
      // .inf/.nan have no JSON form (sigs.k8s.io/yaml fails on them); they stay strings here.
      if (s.size() > 1 && is_digit(s[1]) && is_yaml_style_float(s)) {
        return normalize_number(std::strtod(std::string(s).c_str(), nullptr));
      }
      break;
    }
    case '+':
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      return resolve_numeric(s);
    default:
      break;
  }
  return std::string(s);
}

std::optional<std::string> resolve_plain_key(std::string_view text) {
  // A letter or '~' starts no number: only the words of yaml_word are not their own text, and
  // no Json is built for the rest (most keys: "name", "image").
  if (!text.empty() && (is_letter(text.front()) || text.front() == '~')) {
    switch (yaml_word(text)) {
      case Word::kNull:
        return std::nullopt;
      case Word::kTrue:
        return "true";
      case Word::kFalse:
        return "false";
      case Word::kNone:
        return std::string(text);
    }
  }
  Json v = resolve_plain_scalar(text);
  if (v.is_string()) return std::move(v.get_ref<std::string&>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  return std::nullopt;
}

bool plain_scalar_is_safe(std::string_view s) {
  if (s.empty()) return false;
  if (!resolve_plain_scalar(s).is_string()) return false;
  // Indicators that cannot start a plain scalar, and spaces that would be trimmed.
  static constexpr std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`=~ \t";
  if (kIndicators.find(s.front()) != std::string_view::npos) return false;
  if (s.back() == ' ' || s.back() == '\t' || s.back() == ':') return false;
  // go-yaml v2: `+.inf` is a float, `<<` a merge key. Any leading + is quoted.
  if (s.front() == '+' || s == "<<") return false;
  if (has_unsafe_unicode(s)) return false;
  // Anything number-like is quoted, whichever YAML version reads it (1e3, 0o17, 1:20, .5).
  if (is_digit(s.front()) || s.front() == '.') {
    bool numberish = true;
    for (char c : s) {
      if (!(is_digit(c) || c == '.' || c == '_' || c == ':' || c == '+' || c == '-' || c == 'e' ||
            c == 'E' || c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'b' || c == 'B' ||
            (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
        numberish = false;
        break;
      }
    }
    if (numberish) return false;
  }
  // YAML 1.2 core booleans/nulls in other spellings, and .inf/.nan.
  if (s.front() == '.' && s.size() <= 4) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t')) return false;
    if (c == '#' && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) return false;
  }
  if (s.size() >= 3 && (s.substr(0, 3) == "---" || s.substr(0, 3) == "...")) return false;
  return true;
}

}  // namespace gpuadmit::yaml
