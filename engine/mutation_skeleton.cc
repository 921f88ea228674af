#include "engine/mutation_skeleton.h"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "engine/kueue.h"
#include "engine/pod_writer.h"

namespace gpuadmit {
namespace {

Json placeholder() { return Json(Json::value_t::discarded); }

// An object with the same keys in the same order, or a list of the same length, all of
// placeholders; a scalar is copied (it is its own shape).
Json shell_of(const Json& original) {
  if (original.is_object()) {
    Json shell = Json::object();
    Json::object_t& members = shell.get_ref<Json::object_t&>();
    members.reserve(original.size());
    for (const auto& [key, value] : original.get_ref<const Json::object_t&>()) {
      members.emplace_back(key, placeholder());
    }
    return shell;
  }
  if (original.is_array()) {
    Json shell = Json::array();
    Json::array_t& elements = shell.get_ref<Json::array_t&>();
    elements.resize(original.size(), placeholder());
    return shell;
  }
  return original;
}

// The reference tokens of a JSON Pointer, root first (json_pointer keeps them private).
std::vector<std::string> tokens_of(JsonPointer pointer) {
  std::vector<std::string> tokens;
  while (!pointer.empty()) {
    tokens.push_back(pointer.back());
    pointer.pop_back();
  }
  return {tokens.rbegin(), tokens.rend()};
}

struct Node {
  Json* skeleton = nullptr;  // nullptr: the original has no such path
  const Json* original = nullptr;
};

// Opens a node's skeleton for descending: a placeholder becomes the shell of the original.
Node opened(Json* skeleton, const Json* original) {
  if (skeleton == nullptr || original == nullptr) return {};
  if (is_placeholder(*skeleton)) *skeleton = shell_of(*original);
  return {skeleton, original};
}

Node member(Node parent, std::string_view key) {
  if (!parent.original->is_object()) return {};
  const Json* original = find_member(*parent.original, key);
  return opened(original != nullptr ? find_member(*parent.skeleton, key) : nullptr, original);
}

Node element(Node parent, std::size_t index) {
  if (!parent.original->is_array() || index >= parent.original->size()) return {};
  return opened(&(*parent.skeleton)[index], &(*parent.original)[index]);
}

// A JSON Pointer token names a member of an object, or an index (digits only) in a list.
Node child(Node parent, std::string_view token) {
  if (!parent.original->is_array()) return member(parent, token);
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  if (ec != std::errc() || end != token.data() + token.size()) return {};
  return element(parent, index);
}

Node descend(Node node, const JsonPointer& pointer) {
  for (const std::string& token : tokens_of(pointer)) {
    node = child(node, token);
    if (node.skeleton == nullptr) return {};
  }
  return node;
}

// A member mutators write: copied whole (a shell opened there by another path is replaced: the
// copy holds everything below it).
void copy_member(Node parent, std::string_view key) {
  if (parent.original == nullptr || !parent.original->is_object()) return;
  const Json* original = find_member(*parent.original, key);
  if (original == nullptr) return;
  if (Json* skeleton = find_member(*parent.skeleton, key)) *skeleton = *original;
}

}  // namespace

Json mutation_skeleton(const Json& object, const std::vector<PodSpecLocation>& locations) {
  Json skeleton = shell_of(object);
  const Node root{&skeleton, &object};
  for (const PodSpecLocation& location : locations) {
    if (const Node spec = descend(root, location.spec); spec.skeleton != nullptr) {
      for (std::string_view key : kMutableSpecMembers) copy_member(spec, key);
      for (std::string_view list_key : kContainerLists) {
        const Json* list = find_member(*spec.original, list_key);
        if (list == nullptr || !list->is_array()) continue;  // PodView refuses such a spec
        const Node opened_list = member(spec, list_key);
        for (std::size_t i = 0; i < list->size(); ++i) {
          if (!(*list)[i].is_object()) continue;
          const Node container = element(opened_list, i);
          for (std::string_view key : kMutableContainerMembers) copy_member(container, key);
        }
      }
    }
    if (const Node metadata = descend(root, location.metadata); metadata.skeleton != nullptr) {
      copy_member(metadata, kMutableMetadataMember);
    }
  }
  if (const std::optional<JsonPointer> queue = kueue_queue_metadata(object)) {
    if (const Node metadata = descend(root, *queue); metadata.skeleton != nullptr) {
      copy_member(metadata, kMutableQueueMetadataMember);
    }
  }
  return skeleton;
}

void restore_from_skeleton(Json& object, Json& skeleton) {
  if (is_placeholder(skeleton)) return;
  if (skeleton.is_object() && object.is_object()) {
    // Rebuilt in the skeleton's key order (the original's): a member a mutator erased comes back
    // in its place, one it added is left out.
    Json::object_t restored;
    Json::object_t& before = skeleton.get_ref<Json::object_t&>();
    restored.reserve(before.size());
    for (auto& [key, value] : before) {
      Json* now = find_member(object, key);
      if (now == nullptr) {
        restored.emplace_back(std::move(key), std::move(value));  // erased: a copied member
        continue;
      }
      restore_from_skeleton(*now, value);
      restored.emplace_back(std::move(key), std::move(*now));
    }
    object.get_ref<Json::object_t&>() = std::move(restored);
    return;
  }
  if (skeleton.is_array() && object.is_array() && skeleton.size() == object.size()) {
    for (size_t i = 0; i < skeleton.size(); ++i) restore_from_skeleton(object[i], skeleton[i]);
    return;
  }
  object = std::move(skeleton);  // a copied member (no placeholder inside), changed or retyped
}

}  // namespace gpuadmit
