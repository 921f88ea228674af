#pragma once
// Where Kueue reads a workload's queue: the kinds Kueue manages and the metadata whose
// `kueue.x-k8s.io/queue-name` label names the LocalQueue (docs/mutations.md §10, GPU025).
//
//   if (auto at = kueue_queue_metadata(job)) ...   // JsonPointer("/metadata")
//   kueue_queue_name(job)                          // "team-a", or "" when none is named

#include <optional>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit {

inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
// Kueue's deprecated spelling, still read when the label is absent (jobframework
// QueueNameForObject).
inline constexpr std::string_view kQueueNameAnnotation = "kueue.x-k8s.io/queue-name";

// The metadata (possibly absent in the object) whose labels Kueue reads the queue name from, or
// nullopt when Kueue does not manage this object: a kind it has no integration for, or an object
// it manages through its owner (a Job of a JobSet, a RayCluster of a RayJob, a Pod created by
// any controller).
std::optional<JsonPointer> kueue_queue_metadata(const Json& object);

// The queue the object names where Kueue reads it (the label, else the deprecated annotation),
// or "" when it names none.
std::string kueue_queue_name(const Json& object, const JsonPointer& metadata);

}  // namespace gpuadmit
