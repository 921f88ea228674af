#pragma once
// What the pipeline compares the edited object against: a copy of the object before the
// mutators run, reduced to the members mutators write (the mutation contract,
// engine/pod_writer.h) — every other member is a placeholder that json_diff takes as equal to
// whatever the target holds there. Objects and lists on the way keep all their keys (in order)
// and elements, so the diff emits exactly the operations, in exactly the order, of a diff against
// a whole copy, without copying or walking what no mutator writes.
//
// The pipeline records a member when a mutator first reaches it (PodWriter calls record_*), so
// only the members a mutation touches are copied and diffed — a CPU pod's one `env`, not every
// container's resources and the annotations:
//
//   MutationSkeleton skeleton(object);         // before any mutator writes
//   PodWriter writer(pod, object, &skeleton);  // records each member before its first write
//   ... mutators edit `object` in place ...
//   JsonDiff d = json_diff(skeleton.json(), object, PatchForm::kText);
//
// Recording late is exact: a mutator writes only below a member it reached through PodWriter
// (recorded first), or creates the metadata that member sits in — whose parent's shell was opened
// by that same recording, before the creation. So every shell is opened from its object as it was
// before any mutation, and every member is copied before its first write.

#include <cstddef>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "engine/pod_view.h"
#include "engine/workload.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

// A stand-in for a member no mutator writes (nlohmann's `discarded` type, which no parser of
// ours produces).
inline bool is_placeholder(const Json& j) { return j.is_discarded(); }

class MutationSkeleton {
 public:
  // `object`: what the mutators edit; it must outlive the recording.
  explicit MutationSkeleton(const Json& object) : object_(&object) {}

  // Each records one writable member of a pod spec (`location`, whose spec in the object is
  // `spec`) as the object holds it now — absent, it stays absent — with the shells on its way.
  // Again for the same member: nothing.
  void record_spec_member(const PodSpecLocation& location, const Json& spec, std::string_view key);
  void record_container_member(const PodSpecLocation& location, const Json& spec,
                               ContainerKind kind, std::size_t index, std::string_view key);
  // A member of the metadata at `metadata` (a pod's or template's, or Kueue's queue site).
  void record_metadata_member(const JsonPointer& metadata, std::string_view key);

  // A placeholder (equal to anything) until something is recorded.
  Json& json() { return skeleton_; }

 private:
  // The skeleton of the pod spec at `location`, opened; nullptr when the object has none there.
  Json* spec_skeleton(const PodSpecLocation& location);
  // True the first time for a member (`at`: the location or metadata pointer; `list`: a
  // ContainerKind, or -1; `key`: one of engine/pod_writer.h's names): mutators reach the same
  // member many times, and each later time is this one lookup — a hashed one, so a pod of n
  // containers records in O(n), not O(n²) (issue 38: 67% of a 10,000-container review).
  bool first_time(const void* at, int list, std::size_t index, std::string_view key);

  // `key` by address: the names are engine/pod_writer.h's constants, one address each.
  struct Recorded {
    const void* at;
    int list;
    std::size_t index;
    const char* key;
    bool operator==(const Recorded&) const = default;
  };
  struct RecordedHash {
    std::size_t operator()(const Recorded& r) const noexcept;
  };

  const Json* object_;
  Json skeleton_ = Json(Json::value_t::discarded);
  // The opened spec of each pod spec recorded so far: shells never move once opened.
  std::vector<std::pair<const PodSpecLocation*, Json*>> specs_;
  std::unordered_set<Recorded, RecordedHash> recorded_;
};

// Every member mutators may write, of every pod spec, recorded up front (what the lazy recording
// adds up to when mutators write everything); `policy` says where each pod spec's queue label is
// (engine/kueue.h kueue_queue_site).
Json mutation_skeleton(const Json& object, const std::vector<PodSpecLocation>& locations,
                       const CompiledPolicy& policy);

// Undoes the mutators' edits of `object` in place: every member the skeleton holds (what
// mutators may write) gets its value from before they ran, members they added go, and keys keep
// their original order; placeholders leave the object's member as it is. `skeleton` is consumed.
// For a mutator that failed (engine/pipeline.cc fail_mutation): no partial edit survives.
void restore_from_skeleton(Json& object, Json& skeleton);

}  // namespace gpuadmit
