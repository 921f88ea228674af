#include "engine/pod_view.h"

#include <utility>

namespace gpuadmit {
namespace {

std::string_view type_name(const Json& j) {
  if (j.is_object()) return "object";
  if (j.is_array()) return "array";
  if (j.is_string()) return "string";
  if (j.is_boolean()) return "boolean";
  if (j.is_number()) return "number";
  return "null";
}

// "<path>.<key>[<i>]", built in one string.
std::string list_element_path(const std::string& path, std::string_view key, size_t i) {
  const std::string index = std::to_string(i);
  std::string out;
  out.reserve(path.size() + key.size() + index.size() + 3);
  out.append(path).append(".").append(key).append("[").append(index).append("]");
  return out;
}

// A dotted path spelled out only when a message needs it: a well-formed spec (nearly every one)
// builds none. Each segment points at its parent, which outlives it (the checks nest).
struct LazyPath {
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  const std::string* root = nullptr;  // the first segment's: the pod spec's or metadata's path
  const LazyPath* parent = nullptr;
  std::string_view member;       // ".member"
  std::size_t index = kNoIndex;  // then "[index]"

  std::string str() const {
    std::string out = parent != nullptr ? parent->str() : *root;
    if (index != kNoIndex) return list_element_path(out, member, index);
    if (!member.empty()) out.append(".").append(member);
    return out;
  }
  static LazyPath at(const std::string& root) { return {&root, nullptr, {}, kNoIndex}; }
  LazyPath child(std::string_view name) const { return {nullptr, this, name, kNoIndex}; }
  LazyPath element(std::string_view list, std::size_t i) const { return {nullptr, this, list, i}; }
};

// Collects the first shape error; every check is "absent or null is fine".
class ShapeChecker {
 public:
  bool ok() const { return error_.empty(); }
  std::string take() { return std::move(error_); }

  const Json* object(const Json& parent, std::string_view key, const LazyPath& path) {
    const Json* v = find_member(parent, key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_object()) return fail(path.child(key).str(), "an object", *v);
    return v;
  }
  const Json* array(const Json& parent, std::string_view key, const LazyPath& path) {
    const Json* v = find_member(parent, key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_array()) return fail(path.child(key).str(), "a list", *v);
    return v;
  }
  void string(const Json& parent, std::string_view key, const LazyPath& path) {
    const Json* v = find_member(parent, key);
    if (v != nullptr && !v->is_null() && !v->is_string()) {
      fail(path.child(key).str(), "a string", *v);
    }
  }
  void string_map(const Json& parent, std::string_view key, const LazyPath& path) {
    const Json* m = object(parent, key, path);
    if (m == nullptr) return;
    for (auto it = m->begin(); it != m->end() && ok(); ++it) {
      if (!it->is_string() && !it->is_null())
        fail(path.child(key).str() + "[\"" + it.key() + "\"]", "a string", *it);
    }
  }
  // Each element of a list must be an object; calls `each(element, element_path)`.
  template <typename F>
  void object_list(const Json& parent, std::string_view key, const LazyPath& path, F each) {
    const Json* list = array(parent, key, path);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size() && ok(); ++i) {
      const LazyPath element_path = path.element(key, i);
      if (!(*list)[i].is_object()) {
        fail(element_path.str(), "an object", (*list)[i]);
        return;
      }
      each((*list)[i], element_path);
    }
  }
  void quantity_map(const Json& parent, std::string_view key, const LazyPath& path) {
    const Json* m = object(parent, key, path);
    if (m == nullptr) return;
    for (auto it = m->begin(); it != m->end() && ok(); ++it) {
      if (!it->is_string() && !it->is_number() && !it->is_null())
        fail(path.child(key).str() + "[\"" + it.key() + "\"]", "a quantity", *it);
    }
  }

  std::nullptr_t fail(const std::string& path, std::string_view expected, const Json& got) {
    if (error_.empty()) {
      error_ = path + ": must be " + std::string(expected) + ", not " + std::string(type_name(got));
    }
    return nullptr;
  }

 private:
  std::string error_;
};

void check_container(ShapeChecker& c, const Json& container, const LazyPath& path) {
  c.string(container, "name", path);
  c.string(container, "restartPolicy", path);
  if (const Json* resources = c.object(container, "resources", path)) {
    const LazyPath resources_path = path.child("resources");
    c.quantity_map(*resources, "requests", resources_path);
    c.quantity_map(*resources, "limits", resources_path);
  }
}

void check_expression(ShapeChecker& c, const Json& expr, const LazyPath& path) {
  c.string(expr, "key", path);
  c.string(expr, "operator", path);
  if (const Json* values = c.array(expr, "values", path)) {
    for (size_t i = 0; i < values->size() && c.ok(); ++i) {
      if (!(*values)[i].is_string()) {
        c.fail(path.element("values", i).str(), "a string", (*values)[i]);
      }
    }
  }
}

void check_affinity(ShapeChecker& c, const Json& spec, const LazyPath& path) {
  const Json* affinity = c.object(spec, "affinity", path);
  if (affinity == nullptr) return;
  const LazyPath affinity_path = path.child("affinity");
  const Json* node_affinity = c.object(*affinity, "nodeAffinity", affinity_path);
  if (node_affinity == nullptr) return;
  const LazyPath na_path = affinity_path.child("nodeAffinity");
  const Json* required =
      c.object(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", na_path);
  if (required == nullptr) return;
  const LazyPath required_path = na_path.child("requiredDuringSchedulingIgnoredDuringExecution");
  c.object_list(*required, "nodeSelectorTerms", required_path,
                [&](const Json& term, const LazyPath& term_path) {
                  for (std::string_view list : {"matchExpressions", "matchFields"}) {
                    c.object_list(term, list, term_path,
                                  [&](const Json& expr, const LazyPath& expr_path) {
                                    check_expression(c, expr, expr_path);
                                  });
                  }
                });
}

const Json* metadata_at(const Json& object, const JsonPointer& pointer) {
  const Json* m = find_pointer(object, pointer);
  return m != nullptr && m->is_object() ? m : nullptr;
}

std::optional<std::string> lookup(const Json* metadata, std::string_view section,
                                  std::string_view key) {
  if (metadata == nullptr) return std::nullopt;
  const Json* map = find_member(*metadata, section);
  if (map == nullptr) return std::nullopt;
  const Json* v = find_member(*map, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

// What the checks below accept of a pod (template) metadata, without building paths: null, or
// an object whose annotations and labels are absent, null, or objects of strings and nulls.
bool metadata_well_formed(const Json& metadata) {
  if (metadata.is_null()) return true;
  if (!metadata.is_object()) return false;
  for (std::string_view key : {"annotations", "labels"}) {
    const Json* map = find_member(metadata, key);
    if (map == nullptr || map->is_null()) continue;
    if (!map->is_object()) return false;
    for (const Json& v : *map) {
      if (!v.is_string() && !v.is_null()) return false;
    }
  }
  return true;
}

}  // namespace

Expected<PodView> PodView::make(const Json& object, const PodSpecLocation& location) {
  const Json* found = find_pointer(object, location.spec);
  if (found == nullptr) return Unexpected(location.path + ": missing");
  const Json& spec = *found;
  ShapeChecker c;
  if (!spec.is_object()) {
    c.fail(location.path, "an object", spec);
    return Unexpected(c.take());
  }
  const LazyPath path = LazyPath::at(location.path);
  for (std::string_view list : kContainerLists) {
    c.object_list(spec, list, path, [&](const Json& container, const LazyPath& p) {
      check_container(c, container, p);
    });
  }
  c.object_list(spec, "tolerations", path, [&](const Json& t, const LazyPath& p) {
    for (std::string_view k : {"key", "operator", "value", "effect"}) c.string(t, k, p);
  });
  c.string_map(spec, "nodeSelector", path);
  check_affinity(c, spec, path);
  c.string(spec, "priorityClassName", path);
  if (const Json* priority = find_member(spec, "priority");
      priority != nullptr && !priority->is_null() && !priority->is_number_integer()) {
    c.fail(path.child("priority").str(), "an integer", *priority);
  }
  if (const Json* resources = c.object(spec, "resources", path)) {
    const LazyPath resources_path = path.child("resources");
    c.quantity_map(*resources, "requests", resources_path);
    c.quantity_map(*resources, "limits", resources_path);
  }
  // The metadata's path is spelled out only for a message: well-formed metadata needs none.
  if (const Json* found_metadata = find_pointer(object, location.metadata);
      found_metadata != nullptr && !metadata_well_formed(*found_metadata)) {
    const Json& metadata = *found_metadata;
    const std::string meta_path = dotted_path(location.metadata);
    if (!metadata.is_null() && !metadata.is_object()) {
      c.fail(meta_path, "an object", metadata);
    } else if (metadata.is_object()) {
      c.string_map(metadata, "annotations", LazyPath::at(meta_path));
      c.string_map(metadata, "labels", LazyPath::at(meta_path));
    }
  }
  if (!c.ok()) return Unexpected(c.take());
  return PodView(object, location);
}

PodView::PodView(const Json& object, const PodSpecLocation& location)
    : object_(&object), location_(&location) {
  const Json& spec = this->spec();
  const std::pair<std::string_view, ContainerKind> lists[] = {
      {"initContainers", ContainerKind::kInit},
      {"containers", ContainerKind::kApp},
      {"ephemeralContainers", ContainerKind::kEphemeral}};
  for (const auto& [key, kind] : lists) {
    const Json* list = find_member(spec, key);
    if (list == nullptr || !list->is_array()) continue;
    for (size_t i = 0; i < list->size(); ++i) {
      const Json& c = (*list)[i];
      ContainerRef ref;
      ref.kind = kind;
      ref.index = i;
      ref.name = std::string(string_member(c, "name"));
      // KEP-753: an init container with restartPolicy Always is a sidecar that keeps running.
      ref.restartable =
          kind == ContainerKind::kInit && string_member(c, "restartPolicy") == "Always";
      ref.path = list_element_path(location.path, key, i);
      containers_.push_back(std::move(ref));
    }
  }
}

const Json& PodView::container(const ContainerRef& ref) const {
  // make() checked that each list is a list of objects; mutators never add or remove one.
  return (*find_member(spec(), container_list(ref.kind)))[ref.index];
}

const Json* PodView::metadata() const { return metadata_at(*object_, location_->metadata); }

std::optional<std::string> PodView::setting(std::string_view key) const {
  const Json* pod_meta = metadata();
  // The object's own metadata: a member lookup, not a JSON Pointer walk.
  const Json* top_meta = find_member(*object_, "metadata");
  if (top_meta != nullptr && !top_meta->is_object()) top_meta = nullptr;
  if (auto v = lookup(pod_meta, "annotations", key)) return v;
  if (auto v = lookup(pod_meta, "labels", key)) return v;
  if (top_meta != pod_meta) {
    if (auto v = lookup(top_meta, "annotations", key)) return v;
    if (auto v = lookup(top_meta, "labels", key)) return v;
  }
  return std::nullopt;
}

}  // namespace gpuadmit
