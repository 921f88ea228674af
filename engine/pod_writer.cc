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
  return {&spec(), kMutableSpecMembers[static_cast<std::size_t>(member)]};
}

WritableMember PodWriter::container(const ContainerRef& ref, ContainerMember member) {
  Json& container = spec().at(std::string(container_list(ref.kind))).at(ref.index);
  return {&container, kMutableContainerMembers[static_cast<std::size_t>(member)]};
}

bool PodWriter::set_annotation(std::string_view key, std::string_view value) {
  Json& meta = (*object_)[pod_->location().metadata];
  if (!meta.is_object()) meta = Json::object();
  WritableMember annotations(&meta, kMutableMetadataMember);
  Json* map = annotations.object();
  if (map == nullptr) map = &(meta[std::string(kMutableMetadataMember)] = Json::object());
  return WritableMember(map, key).set(std::string(value));
}

Json* PodWriter::queue_labels(const CompiledPolicy& policy) {
  const std::optional<QueueSite> site = kueue_queue_site(*object_, pod_->location(), policy);
  if (!site) return nullptr;
  const JsonPointer& at = site->metadata;
  if (!object_->contains(at) || object_->at(at).is_null()) (*object_)[at] = Json::object();
  return WritableMember(&(*object_)[at], kMutableQueueMetadataMember).object();
}

}  // namespace gpuadmit
