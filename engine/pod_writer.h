#pragma once
// The mutation contract as a type: what a mutator may write of a pod spec, and nothing else.
// Mutator::mutate gets a PodWriter; reading goes through view() (a const PodView: the whole
// object, read-only) and writing through the members below. A mutator that writes any other
// member does not compile (tests/contract/ proves it).
//
//   if (Json* tolerations = pod.spec(SpecMember::kTolerations).array()) tolerations->push_back(t);
//   pod.container(ref, ContainerMember::kEnv).array();             // created when absent
//   pod.set_annotation("gpuadmit.io/class", "a100");
//
// The pipeline diffs only these members against the object before mutation: PodWriter records
// each in a MutationSkeleton before a mutator can first write it (engine/mutation_skeleton.h), so
// the webhook's patch and lint --fix always agree; tests/engine/json_diff_test.cpp checks it
// against a whole diff on every golden case and corpus document.

#include <cstddef>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "engine/mutation_skeleton.h"
#include "engine/pod_view.h"

namespace gpuadmit {

// The writable members of the pod spec, of each container (init, sidecar and ephemeral ones
// included), of the pod (template) metadata (created when absent), and of the metadata Kueue
// reads the queue from (engine/kueue.h kueue_queue_site: the top-level object's, a CronJob's
// jobTemplate's, or the pod template's). The enums index the name lists.
enum class SpecMember : std::size_t {
  kTolerations,
  kAffinity,
  kNodeSelector,
  kPriorityClassName,
  kPriority,
  kPreemptionPolicy,
};
inline constexpr std::string_view kMutableSpecMembers[] = {
    "tolerations", "affinity", "nodeSelector", "priorityClassName", "priority", "preemptionPolicy"};
static_assert(std::size(kMutableSpecMembers) ==
              static_cast<std::size_t>(SpecMember::kPreemptionPolicy) + 1);

enum class ContainerMember : std::size_t { kResources, kEnv };
inline constexpr std::string_view kMutableContainerMembers[] = {"resources", "env"};
static_assert(std::size(kMutableContainerMembers) ==
              static_cast<std::size_t>(ContainerMember::kEnv) + 1);

inline constexpr std::string_view kMutableMetadataMember = "annotations";
inline constexpr std::string_view kMutableQueueMetadataMember = "labels";

// One writable member of an object: everything below it may be edited. Short-lived: it points
// into the object, which PodWriter::set_annotation and queue_labels may move.
class WritableMember {
 public:
  Json* find();          // nullptr when absent
  Json* object();        // created (or a null replaced) when absent; nullptr: another type
  Json* array();         // the same, as a list
  bool set(Json value);  // true when the value changed
  bool erase();          // true when it was present

 private:
  friend class PodWriter;
  WritableMember(Json* parent, std::string_view key) : parent_(parent), key_(key) {}
  Json* parent_;  // nullptr, or not an object: nothing to find, nothing written
  std::string_view key_;
};

class PodWriter {
 public:
  // `object` is the object `pod` views (PodView::object()), writable. With `skeleton`, each
  // member is recorded there before it is handed out (or written, by set_annotation and
  // queue_labels).
  PodWriter(const PodView& pod, Json& object, MutationSkeleton* skeleton = nullptr)
      : pod_(&pod), object_(&object), skeleton_(skeleton) {}

  // Everything, read-only.
  const PodView& view() const { return *pod_; }
  const std::vector<ContainerRef>& containers() const { return pod_->containers(); }

  WritableMember spec(SpecMember member);
  WritableMember container(const ContainerRef& ref, ContainerMember member);

  // Sets an annotation on the pod (template) metadata; returns true when it changed.
  bool set_annotation(std::string_view key, std::string_view value);
  // The labels of the metadata Kueue reads this pod spec's queue from (engine/kueue.h
  // kueue_queue_site, for the request's `sender`; created with that metadata when absent), or
  // nullptr when the object names no queue of its own or that metadata is not an object.
  Json* queue_labels(const CompiledPolicy& policy, std::string_view sender);

 private:
  // The view's spec, writable: `object_` is the object the view reads.
  Json& spec() { return const_cast<Json&>(pod_->spec()); }

  const PodView* pod_;
  Json* object_;
  MutationSkeleton* skeleton_;
};

}  // namespace gpuadmit
