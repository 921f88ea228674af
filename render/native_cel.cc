#include "render/native_cel.h"

#include <cstdio>

namespace gpuadmit::render::native {

std::string quote(std::string_view text) {
  std::string out = "'";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char hex[5];
          std::snprintf(hex, sizeof hex, "\\x%02X", c);
          out += hex;
        } else {
          out += ch;
        }
    }
  }
  out += "'";
  return out;
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote(items[i]);
  }
  return out + "]";
}

std::string full_match(std::string_view subject, std::string_view pattern) {
  return std::string(subject) + ".matches(" + quote("^(?:" + std::string(pattern) + ")$") + ")";
}

namespace {

std::string joined(const std::vector<std::string>& terms, std::string_view op,
                   std::string_view empty) {
  if (terms.empty()) return std::string(empty);
  if (terms.size() == 1) return terms.front();
  std::string out = "(";
  for (size_t i = 0; i < terms.size(); ++i) {
    if (i > 0) out += op;
    out += terms[i];
  }
  return out + ")";
}

}  // namespace

std::string any_of(const std::vector<std::string>& terms) { return joined(terms, " || ", "false"); }

std::string all_of(const std::vector<std::string>& terms) { return joined(terms, " && ", "true"); }

std::string let(std::string_view name, std::string_view value, std::string_view body) {
  return "[" + std::string(value) + "].map(" + std::string(name) + ", " + std::string(body) +
         ")[0]";
}

std::string string_field(std::string_view map, std::string_view key) {
  const std::string m(map);
  const std::string k = quote(key);
  return "((" + k + " in " + m + " && type(" + m + "[" + k + "]) == string) ? " + m + "[" + k +
         "] : '')";
}

std::string map_field(std::string_view map, std::string_view key) {
  const std::string m(map);
  const std::string k = quote(key);
  return "((type(" + m + ") == map && " + k + " in " + m + " && type(" + m + "[" + k +
         "]) == map) ? " + m + "[" + k + "] : {})";
}

std::string list_field(std::string_view map, std::string_view key) {
  const std::string m(map);
  const std::string k = quote(key);
  return "((type(" + m + ") == map && " + k + " in " + m + " && type(" + m + "[" + k +
         "]) == list) ? " + m + "[" + k + "] : [])";
}

}  // namespace gpuadmit::render::native
