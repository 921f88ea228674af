#include "lint/explain.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "policies/loader.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {

std::optional<Json> policy_document(const std::string& path) {
  std::string text;
  if (path.empty()) {
    text = std::string(default_policy_text());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  yaml::DocumentStream stream{std::string_view(text)};
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument doc = yaml::parse_document(source, false);
    if (doc.error) return std::nullopt;
    if (!doc.empty) return std::move(doc.value);
  }
  return std::nullopt;
}

const Json* policy_value(const Json& document, std::string_view policy_path) {
  const Json* node = &document;
  for (const std::string& token : yaml::split_dotted_path(policy_path)) {
    if (node->is_object()) {
      node = find_member(*node, token);
    } else if (node->is_array()) {
      const Json* named = nullptr;
      for (const Json& item : *node) {
        if (string_member(item, "name") == token) named = &item;
      }
      if (named == nullptr && !token.empty() && token.size() < 10 &&
          std::all_of(token.begin(), token.end(), [](char c) { return std::isdigit(c); }) &&
          std::stoul(token) < node->size()) {
        named = &(*node)[std::stoul(token)];
      }
      node = named;
    } else {
      return nullptr;
    }
    if (node == nullptr) return nullptr;
  }
  return node;
}

std::string explain_text(const Json& document, std::string_view policy_path) {
  if (policy_path.empty()) return "no policy field (the rule's built-in default)";
  const Json* value = policy_value(document, policy_path);
  if (value == nullptr) return std::string(policy_path);
  return std::string(policy_path) + " = " +
         value->dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpuadmit::lint
