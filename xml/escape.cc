#include "xml/escape.h"

#include <cstdint>

namespace gpuadmit::xml {
namespace {

// The length of the valid UTF-8 sequence at s[i] that XML 1.0 may carry (not U+FFFE/U+FFFF),
// or 0.
size_t xml_utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  size_t length = 0;
  uint32_t cp = 0, min = 0;
  if (b(0) >= 0xC2 && b(0) <= 0xDF) {
    length = 2, cp = b(0) & 0x1F, min = 0x80;
  } else if (b(0) >= 0xE0 && b(0) <= 0xEF) {
    length = 3, cp = b(0) & 0x0F, min = 0x800;
  } else if (b(0) >= 0xF0 && b(0) <= 0xF4) {
    length = 4, cp = b(0) & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp == 0xFFFE || cp == 0xFFFF) {
    return 0;
  }
  return length;
}

}  // namespace

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      const size_t length = xml_utf8_length(s, i);
      if (length == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(s, i, length);
        i += length - 1;
      }
      continue;
    }
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if ((c < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') || c == 0x7f) break;
        out += ch;
    }
  }
  return out;
}

}  // namespace gpuadmit::xml
