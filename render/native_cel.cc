#include "render/native_cel.h"

#include <algorithm>
#include <cctype>
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

namespace {

// A pattern of letters, digits, '-' and '_' matches only itself (policies/compiled_policy.cc
// is_literal).
bool literal_pattern(std::string_view pattern) {
  for (const char c : pattern) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string namespace_in(const std::vector<std::string>& patterns) {
  std::vector<std::string> plain;
  std::vector<std::string> terms;
  for (const std::string& p : patterns) {
    if (literal_pattern(p)) {
      if (std::find(plain.begin(), plain.end(), p) == plain.end()) plain.push_back(p);
    } else {
      const std::string term = full_match("request.namespace", p);
      if (std::find(terms.begin(), terms.end(), term) == terms.end()) terms.push_back(term);
    }
  }
  if (!plain.empty()) terms.insert(terms.begin(), "request.namespace in " + string_list(plain));
  return any_of(terms);
}

std::string any_of(const std::vector<std::string>& terms) { return joined(terms, " || ", "false"); }

std::string all_of(const std::vector<std::string>& terms) { return joined(terms, " && ", "true"); }

std::string let(std::string_view name, std::string_view value, std::string_view body) {
  return "[" + std::string(value) + "].map(" + std::string(name) + ", " + std::string(body) +
         ")[0]";
}

namespace {

// An expression cheap to repeat: a name or a chain of member and literal index selections.
bool is_simple(std::string_view expr) { return expr.find_first_of("( ") == std::string_view::npos; }

// `body(m)` over `map`, with `map` evaluated once: inline when it is simple, else bound to `mv`
// (each nesting level binds its own `mv`; a body only reads the innermost).
template <typename Body>
std::string over(std::string_view map, Body body) {
  if (is_simple(map)) return body(std::string(map));
  return let("mv", map, body(std::string("mv")));
}

}  // namespace

std::string string_field(std::string_view map, std::string_view key) {
  const std::string k = quote(key);
  return over(map, [&](const std::string& m) {
    return "((" + k + " in " + m + " && type(" + m + "[" + k + "]) == string) ? " + m + "[" + k +
           "] : '')";
  });
}

std::string map_field(std::string_view map, std::string_view key) {
  const std::string k = quote(key);
  return over(map, [&](const std::string& m) {
    return "((type(" + m + ") == map && " + k + " in " + m + " && type(" + m + "[" + k +
           "]) == map) ? " + m + "[" + k + "] : {})";
  });
}

std::string list_field(std::string_view map, std::string_view key) {
  const std::string k = quote(key);
  return over(map, [&](const std::string& m) {
    return "((type(" + m + ") == map && " + k + " in " + m + " && type(" + m + "[" + k +
           "]) == list) ? " + m + "[" + k + "] : [])";
  });
}

}  // namespace gpuadmit::render::native
