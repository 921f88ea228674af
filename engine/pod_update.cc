#include "engine/pod_update.h"

namespace gpuadmit {
namespace {

const Json* object_member(const Json& j, std::string_view key) {
  const Json* m = j.is_object() ? find_member(j, key) : nullptr;
  return m != nullptr && m->is_object() ? m : nullptr;
}

// Absent in both, or present in both and equal (JSON equality, as CEL's == compares the
// unstructured objects in the rendered matchConditions).
bool same_member(const Json* a, const Json* b, std::string_view key) {
  const Json* x = a != nullptr ? find_member(*a, key) : nullptr;
  const Json* y = b != nullptr ? find_member(*b, key) : nullptr;
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

// Every cdi.k8s.io/ annotation of `a` is in `b` with the same value.
bool cdi_annotations_within(const Json* a, const Json* b) {
  if (a == nullptr) return true;
  for (auto it = a->begin(); it != a->end(); ++it) {
    if (it.key().rfind(kCdiAnnotationPrefix, 0) != 0) continue;
    const Json* other = b != nullptr ? find_member(*b, it.key()) : nullptr;
    if (other == nullptr || *other != it.value()) return false;
  }
  return true;
}

const Json* metadata_map(const Json& pod, std::string_view key) {
  const Json* metadata = object_member(pod, "metadata");
  return metadata != nullptr ? object_member(*metadata, key) : nullptr;
}

}  // namespace

bool pod_placement_changed(const Json& object, const Json& old_object) {
  const Json* spec = object_member(object, "spec");
  const Json* old_spec = object_member(old_object, "spec");
  for (const std::string_view field : kPodPlacementFields) {
    if (!same_member(spec, old_spec, field)) return true;
  }
  const Json* labels = metadata_map(object, "labels");
  const Json* old_labels = metadata_map(old_object, "labels");
  for (const std::string_view label : kPodKueueLabels) {
    if (!same_member(labels, old_labels, label)) return true;
  }
  const Json* annotations = metadata_map(object, "annotations");
  const Json* old_annotations = metadata_map(old_object, "annotations");
  return !cdi_annotations_within(annotations, old_annotations) ||
         !cdi_annotations_within(old_annotations, annotations);
}

}  // namespace gpuadmit
