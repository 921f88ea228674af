#include "engine/mutation_skeleton.h"

#include <charconv>
#include <functional>
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
    Json shell = empty_object();
    Json::object_t& members = shell.get_ref<Json::object_t&>();
    members.reserve(original.size());
    for (const auto& [key, value] : original.get_ref<const Json::object_t&>()) {
      members.emplace_back(key, placeholder());
    }
    return shell;
  }
  if (original.is_array()) {
    Json shell = empty_array();
    Json::array_t& elements = shell.get_ref<Json::array_t&>();
    elements.resize(original.size(), placeholder());
    return shell;
  }
  return original;
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
  for (const std::string& token : pointer_tokens(pointer)) {
    node = child(node, token);
    if (node.skeleton == nullptr) return {};
  }
  return node;
}

// A member mutators write, copied whole when first recorded; recorded before (its skeleton is
// no longer a placeholder) or absent then (its shell has no such key): left as it is.
void copy_member(Node parent, std::string_view key) {
  if (parent.original == nullptr || !parent.original->is_object()) return;
  const Json* original = find_member(*parent.original, key);
  if (original == nullptr) return;
  Json* skeleton = find_member(*parent.skeleton, key);
  if (skeleton != nullptr && is_placeholder(*skeleton)) *skeleton = *original;
}

}  // namespace

Json* MutationSkeleton::spec_skeleton(const PodSpecLocation& location) {
  for (const auto& [recorded, spec] : specs_) {
    if (recorded == &location) return spec;
  }
  Json* spec = descend(opened(&skeleton_, object_), location.spec).skeleton;
  specs_.emplace_back(&location, spec);
  return spec;
}

std::size_t MutationSkeleton::RecordedHash::operator()(const Recorded& r) const noexcept {
  // boost::hash_combine's mixing over the four fields.
  std::size_t h = std::hash<const void*>{}(r.at);
  for (std::size_t v :
       {static_cast<std::size_t>(r.list), r.index, std::hash<const char*>{}(r.key)}) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

bool MutationSkeleton::first_time(const void* at, int list, std::size_t index,
                                  std::string_view key) {
  return recorded_.insert({at, list, index, key.data()}).second;
}

void MutationSkeleton::record_spec_member(const PodSpecLocation& location, const Json& spec,
                                          std::string_view key) {
  if (!first_time(&location, -1, 0, key)) return;
  if (Json* skeleton = spec_skeleton(location)) copy_member(Node{skeleton, &spec}, key);
}

void MutationSkeleton::record_container_member(const PodSpecLocation& location, const Json& spec,
                                               ContainerKind kind, std::size_t index,
                                               std::string_view key) {
  if (!first_time(&location, static_cast<int>(kind), index, key)) return;
  Json* skeleton = spec_skeleton(location);
  if (skeleton == nullptr) return;
  const Node list = member(Node{skeleton, &spec}, container_list(kind));
  if (list.skeleton == nullptr) return;
  const Node container = element(list, index);
  if (container.skeleton != nullptr) copy_member(container, key);
}

void MutationSkeleton::record_metadata_member(const JsonPointer& metadata, std::string_view key) {
  if (!first_time(&metadata, -1, 0, key)) return;
  if (const Node node = descend(opened(&skeleton_, object_), metadata); node.skeleton != nullptr) {
    copy_member(node, key);
  }
}

namespace {

// Every writable member of the pod spec `spec` at `location`: its own and its containers'.
void record_spec(MutationSkeleton& skeleton, const PodSpecLocation& location, const Json& spec) {
  for (std::string_view key : kMutableSpecMembers) skeleton.record_spec_member(location, spec, key);
  for (std::size_t k = 0; k < std::size(kContainerLists); ++k) {
    const Json* list = find_member(spec, kContainerLists[k]);
    if (list == nullptr || !list->is_array()) continue;  // PodView refuses such a spec
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_object()) continue;
      for (std::string_view key : kMutableContainerMembers) {
        skeleton.record_container_member(location, spec, static_cast<ContainerKind>(k), i, key);
      }
    }
  }
}

}  // namespace

Json mutation_skeleton(const Json& object, const std::vector<PodSpecLocation>& locations,
                       const CompiledPolicy& policy) {
  MutationSkeleton skeleton(object);
  for (const PodSpecLocation& location : locations) {
    if (const Json* spec = find_pointer(object, location.spec)) {
      record_spec(skeleton, location, *spec);
    }
    skeleton.record_metadata_member(location.metadata, kMutableMetadataMember);
    // No sender: no owner is believed, so the site is the object's own wherever it has one (a
    // member recorded and left unwritten costs nothing).
    if (const std::optional<QueueSite> queue = kueue_queue_site(object, location, policy, "")) {
      skeleton.record_metadata_member(queue->metadata, kMutableQueueMetadataMember);
    }
  }
  return std::move(skeleton.json());
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
