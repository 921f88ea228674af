#pragma once
// Where Kueue reads a workload's queue: the kinds Kueue manages and the metadata whose
// `kueue.x-k8s.io/queue-name` label names the LocalQueue (docs/mutations.md §10, GPU025).
//
//   if (auto at = kueue_queue_metadata(job)) ...   // JsonPointer("/metadata")
//   kueue_queue_name(job)                          // "team-a", or "" when none is named

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit {

inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
// Kueue's deprecated spelling, still read when the label is absent (jobframework
// QueueNameForObject).
inline constexpr std::string_view kQueueNameAnnotation = "kueue.x-k8s.io/queue-name";

// A kind Kueue has an integration for, by API group ("" is the core group) and kind.
struct KueueManagedKind {
  std::string_view group;
  std::string_view kind;
};
// Every kind Kueue manages, each reading the queue from its own metadata.labels (the native
// policies write the same list into CEL, render/native_rules.cc).
std::span<const KueueManagedKind> kueue_managed_kinds();

// The metadata (possibly absent in the object) whose labels Kueue reads the queue name from, or
// nullopt when Kueue does not manage this object: a kind it has no integration for, or an object
// it manages through its owner (a Job of a JobSet, a RayCluster of a RayJob, a Pod created by
// any controller).
std::optional<JsonPointer> kueue_queue_metadata(const Json& object);

// The queue the object names where Kueue reads it (the label, else the deprecated annotation),
// or "" when it names none.
std::string kueue_queue_name(const Json& object, const JsonPointer& metadata);

}  // namespace gpuadmit
