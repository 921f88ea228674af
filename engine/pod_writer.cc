#include "engine/pod_writer.h"

#include <optional>
#include <string>
#include <utility>

#include "engine/kueue.h"

namespace gpuadmit {

Json* WritableMember::find() { return parent_ == nullptr ? nullptr : find_member(*parent_, key_); }

Json* WritableMember::object() {
  return parent_ == nullptr ? nullptr : member_object(*parent_, key_);
}

Json* WritableMember::array() {
  return parent_ == nullptr ? nullptr : member_array(*parent_, key_);
}

bool WritableMember::set(Json value) {
  if (parent_ == nullptr || !parent_->is_object()) return false;
  Json* current = find_member(*parent_, key_);
  if (current != nullptr && *current == value) return false;
  (*parent_)[std::string(key_)] = std::move(value);
  return true;
}

bool WritableMember::erase() {
  if (find() == nullptr) return false;
  parent_->erase(std::string(key_));
  return true;
}

WritableMember PodWriter::spec(SpecMember member) {
  const std::string_view key = kMutableSpecMembers[static_cast<std::size_t>(member)];
  if (skeleton_ != nullptr) skeleton_->record_spec_member(pod_->location(), pod_->spec(), key);
  return {&spec(), key};
}

WritableMember PodWriter::container(const ContainerRef& ref, ContainerMember member) {
  const std::string_view key = kMutableContainerMembers[static_cast<std::size_t>(member)];
  if (skeleton_ != nullptr) {
    skeleton_->record_container_member(pod_->location(), pod_->spec(), ref.kind, ref.index, key);
  }
  return {&const_cast<Json&>(pod_->container(ref)), key};
}

bool PodWriter::set_annotation(std::string_view key, std::string_view value) {
  if (skeleton_ != nullptr) {
    skeleton_->record_metadata_member(pod_->location().metadata, kMutableMetadataMember);
  }
  Json& meta = (*object_)[pod_->location().metadata];
  pod_->forget_spec_address();  // metadata created beside the spec moves it
  if (!meta.is_object()) meta = empty_object();
  WritableMember annotations(&meta, kMutableMetadataMember);
  Json* map = annotations.object();
  if (map == nullptr) map = &(meta[std::string(kMutableMetadataMember)] = empty_object());
  return WritableMember(map, key).set(std::string(value));
}

Json* PodWriter::queue_labels(const CompiledPolicy& policy, std::string_view sender) {
  const std::optional<QueueSite> site =
      kueue_queue_site(*object_, pod_->location(), policy, sender);
  if (!site) return nullptr;
  const JsonPointer& at = site->metadata;
  if (skeleton_ != nullptr) skeleton_->record_metadata_member(at, kMutableQueueMetadataMember);
  if (const Json* metadata = find_pointer(*object_, at);
      metadata == nullptr || metadata->is_null()) {
    (*object_)[at] = empty_object();
    pod_->forget_spec_address();  // metadata created beside the spec (a Pod's) moves it
  }
  return WritableMember(&(*object_)[at], kMutableQueueMetadataMember).object();
}

}  // namespace gpuadmit
