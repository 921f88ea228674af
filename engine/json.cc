#include "engine/json.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuadmit {
namespace {

// The one access to nlohmann's internals: json_pointer's private `reference_tokens`, named in an
// explicit instantiation, where access checking does not apply ([temp.spec.general]/6). A later
// nlohmann that renames the member fails to compile here, not elsewhere.
using TokenList = std::vector<std::string>;
TokenList JsonPointer::*reference_tokens_member();
template <TokenList JsonPointer::*Member>
struct ReferenceTokens {
  friend TokenList JsonPointer::*reference_tokens_member() { return Member; }
};
template struct ReferenceTokens<&JsonPointer::reference_tokens>;

// An array index as RFC 6901 and nlohmann's json_pointer::contains take it: "0", or digits not
// starting with '0'; nullopt for anything else ("-", "01", "1a", too large).
std::optional<std::size_t> array_index(const std::string& token) {
  if (token.empty() || token.size() > 19 || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  std::size_t index = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  return index;
}

}  // namespace

const std::vector<std::string>& pointer_tokens(const JsonPointer& pointer) {
  return pointer.*reference_tokens_member();
}

const Json* find_pointer(const Json& root, const JsonPointer& pointer) {
  const Json* node = &root;
  for (const std::string& token : pointer_tokens(pointer)) {
    if (node->is_object()) {
      node = find_member(*node, token);
      if (node == nullptr) return nullptr;
    } else if (node->is_array()) {
      const std::optional<std::size_t> index = array_index(token);
      if (!index || *index >= node->size()) return nullptr;
      node = &(*node)[*index];
    } else {
      return nullptr;
    }
  }
  return node;
}

bool json_depth_exceeds(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return true;
        break;
      case ']':
      case '}':
        --depth;
        break;
      default:
        break;
    }
  }
  return false;
}

void append_pointer_token(std::string& out, std::string_view token) {
  // Runs without '~' or '/' are appended whole (most tokens are one run).
  size_t run = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '~' && token[i] != '/') continue;
    out.append(token.data() + run, i - run);
    out += token[i] == '~' ? "~0" : "~1";
    run = i + 1;
  }
  out.append(token.data() + run, token.size() - run);
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  append_pointer_token(out, token);
  return out;
}

const Json* find_member(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

Json* find_member(Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

namespace {

// parent[key] as an empty container of type `type` (an object or a list): created (or a null
// replaced) when absent; nullptr when `parent` is not an object or the member has another type.
// The container is made only when it is put in place: mostly the member is there already.
Json* member_of_type(Json& parent, std::string_view key, Json::value_t type) {
  if (!parent.is_object()) return nullptr;
  Json* member = find_member(parent, key);
  if (member == nullptr) {
    return &parent.get_ref<Json::object_t&>().emplace_back(std::string(key), Json(type)).second;
  }
  if (member->is_null()) *member = Json(type);
  return member->type() == type ? member : nullptr;
}

}  // namespace

Json* member_object(Json& parent, std::string_view key) {
  return member_of_type(parent, key, Json::value_t::object);
}

Json* member_array(Json& parent, std::string_view key) {
  return member_of_type(parent, key, Json::value_t::array);
}

std::string_view string_member(const Json& j, std::string_view key) {
  const Json* v = find_member(j, key);
  if (v == nullptr || !v->is_string()) return {};
  return v->get_ref<const std::string&>();
}

std::string object_name(const Json& object) {
  const Json* metadata = find_member(object, "metadata");
  if (metadata == nullptr) return {};
  std::string_view name = string_member(*metadata, "name");
  if (name.empty()) name = string_member(*metadata, "generateName");
  return std::string(name);
}

namespace {

// Empties every container below `j` (children before parents), so that destroying them finds
// nothing to flatten; below kFreeDepth the destructor's own walk takes over.
constexpr int kFreeDepth = 128;

void free_children(Json& j, int depth) noexcept {
  if (j.is_object()) {
    auto& object = j.get_ref<Json::object_t&>();
    if (depth < kFreeDepth) {
      for (auto& member : object) {
        if (member.second.is_structured()) free_children(member.second, depth + 1);
      }
    }
    object.clear();
  } else if (j.is_array()) {
    auto& array = j.get_ref<Json::array_t&>();
    if (depth < kFreeDepth) {
      for (Json& element : array) {
        if (element.is_structured()) free_children(element, depth + 1);
      }
    }
    array.clear();
  }
}

}  // namespace

void free_json(Json& j) noexcept {
  free_children(j, 0);
  j = nullptr;
}

}  // namespace gpuadmit
