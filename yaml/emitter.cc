#include "yaml/emitter.h"

#include <cmath>

#include "yaml/scalar.h"

namespace gpuadmit::yaml {
namespace {

void indent_to(int indent, std::string& out) { out.append(static_cast<size_t>(indent), ' '); }

std::string quoted(const std::string& s) {
  // JSON string escapes are all valid in YAML double-quoted scalars.
  std::string text = Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  return has_unsafe_unicode(text) ? escape_unsafe_unicode(text) : text;
}

// A literal block (`|`, `|-`) reads back exactly for text without control characters other than
// tab, that does not start with whitespace and ends with at most one newline.
bool literal_block_fits(const std::string& s) {
  if (s.find('\n') == std::string::npos) return false;
  if (s.front() == ' ' || s.front() == '\t' || s.front() == '\n') return false;
  if (s.size() >= 2 && s[s.size() - 1] == '\n' && s[s.size() - 2] == '\n') return false;
  if (has_unsafe_unicode(s)) return false;
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

void emit_string(const std::string& s, int indent, std::string& out) {
  if (plain_scalar_is_safe(s)) {
    out += s;
    out += '\n';
    return;
  }
  if (!literal_block_fits(s)) {
    out += quoted(s);
    out += '\n';
    return;
  }
  const bool trailing_newline = s.back() == '\n';
  out += trailing_newline ? "|\n" : "|-\n";
  const size_t end = trailing_newline ? s.size() - 1 : s.size();
  size_t start = 0;
  while (start <= end) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos || nl > end) nl = end;
    if (nl > start) {
      indent_to(indent + 2, out);
      out.append(s, start, nl - start);
    }
    out += '\n';
    start = nl + 1;
  }
}

void emit_number(const Json& v, std::string& out) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    const Json normalized = normalize_number(d);
    out += std::isfinite(d) ? normalized.dump() : "null";
    return;
  }
  out += v.dump();
}

// A scalar or an empty collection after "key: " or "- ".
void emit_inline(const Json& v, int indent, std::string& out) {
  switch (v.type()) {
    case Json::value_t::string:
      emit_string(v.get_ref<const std::string&>(), indent, out);
      return;
    case Json::value_t::object:
      out += "{}\n";
      return;
    case Json::value_t::array:
      out += "[]\n";
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true\n" : "false\n";
      return;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      emit_number(v, out);
      out += '\n';
      return;
    default:
      out += "null\n";
      return;
  }
}

bool is_block(const Json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void emit_seq(const Json& array, int indent, bool first_inline, std::string& out);

void emit_map(const Json& object, int indent, bool first_inline, std::string& out) {
  bool first = true;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!(first && first_inline)) indent_to(indent, out);
    first = false;
    const std::string& key = it.key();
    out += plain_scalar_is_safe(key) ? key : quoted(key);
    out += ':';
    const Json& value = it.value();
    if (value.is_object() && !value.empty()) {
      out += '\n';
      emit_map(value, indent + 2, false, out);
    } else if (value.is_array() && !value.empty()) {
      out += '\n';
      emit_seq(value, indent, false, out);
    } else {
      out += ' ';
      emit_inline(value, indent, out);
    }
  }
}

void emit_seq(const Json& array, int indent, bool first_inline, std::string& out) {
  bool first = true;
  for (const Json& item : array) {
    if (!(first && first_inline)) indent_to(indent, out);
    first = false;
    out += "- ";
    if (item.is_object() && !item.empty()) {
      emit_map(item, indent + 2, true, out);
    } else if (item.is_array() && !item.empty()) {
      emit_seq(item, indent + 2, true, out);
    } else {
      emit_inline(item, indent, out);
    }
  }
}

}  // namespace

void emit_yaml(const Json& value, std::string& out) {
  if (value.is_object() && is_block(value)) {
    emit_map(value, 0, false, out);
  } else if (value.is_array() && is_block(value)) {
    emit_seq(value, 0, false, out);
  } else {
    emit_inline(value, -2, out);
  }
}

}  // namespace gpuadmit::yaml
