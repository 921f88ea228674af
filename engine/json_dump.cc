#include "engine/json_dump.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <charconv>

namespace gpuadmit {
namespace {

// Printable ASCII without '"' or '\\': copied as it is. Checked 16 bytes at a time — the
// response's base64 patch alone is ~2 KB, byte by byte ~10,000 instructions a review.
bool plain_ascii(std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
#ifdef __SSE2__
  // One signed compare finds both control characters (0..1F) and non-ASCII bytes (negative).
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i del = _mm_set1_epi8(0x7f);
  const __m128i space = _mm_set1_epi8(0x20);
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, del), _mm_cmplt_epi8(v, space)));
    if (_mm_movemask_epi8(special) != 0) return false;
  }
#endif
  for (; p != end; ++p) {
    const auto u = static_cast<unsigned char>(*p);
    if (u < 0x20 || u >= 0x7f || *p == '"' || *p == '\\') return false;
  }
  return true;
}

template <typename Integer>
void append_integer(std::string& out, Integer v) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

bool needs_json_escape(std::string_view value) { return !plain_ascii(value); }

void append_json_string(std::string& out, std::string_view value, Json::error_handler_t handler) {
  if (plain_ascii(value)) {
    out += '"';
    out += value;
    out += '"';
    return;
  }
  out += Json(std::string(value)).dump(-1, ' ', false, handler);
}

void append_json(std::string& out, const Json& value, Json::error_handler_t handler) {
  switch (value.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, key, handler);
        out += ':';
        append_json(out, member, handler);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& element : value.get_ref<const Json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        append_json(out, element, handler);
      }
      out += ']';
      return;
    }
    case Json::value_t::string:
      append_json_string(out, value.get_ref<const std::string&>(), handler);
      return;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::number_unsigned:
      append_integer(out, value.get<Json::number_unsigned_t>());
      return;
    case Json::value_t::number_integer:
      append_integer(out, value.get<Json::number_integer_t>());
      return;
    default:  // floats (nlohmann's own shortest round-trip format), binary, discarded
      out += value.dump(-1, ' ', false, handler);
      return;
  }
}

std::string dump_json(const Json& value, Json::error_handler_t handler) {
  std::string out;
  out.reserve(256);
  append_json(out, value, handler);
  return out;
}

}  // namespace gpuadmit
