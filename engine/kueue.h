#pragma once
// Where Kueue reads a workload's queue (the kueue.x-k8s.io/queue-name label of a LocalQueue),
// decided as Kueue decides which objects it manages (docs/mutations.md §10, GPU025): the kind's
// column of the table (engine/workload_kinds.h KueueQueue), unless an owner holds it — an owner
// believed only when its controller sent the object (engine/controllers.h
// sent_by_owner_controller).
//
//   auto site = kueue_queue_site(job, location, policy, sender);  // believes owners from sender
//   if (site) site->metadata;                                   // "/metadata"
//   kueue_queue_name(job, site->metadata)      // "team-a", or "" when none is named

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/controllers.h"
#include "engine/json.h"
#include "engine/workload.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

// The label only: Kueue v0.15.0 removed the deprecated annotation of the same key
// (kubernetes-sigs/kueue#7271, "Removed the deprecated workload annotation key"), so a workload
// that names its queue only there runs outside Kueue. An annotation is no queue here either.
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// The WorkloadPriorityClass of a workload: Kueue reads it from the same object's labels as the
// queue (jobframework WorkloadPriorityClassName), and prefers it to the pods' PriorityClass for
// queue order and preemption. GPU010 bounds it by the tenant's priority.allowed.
inline constexpr std::string_view kWorkloadPriorityClassLabel = "kueue.x-k8s.io/priority-class";

// The scheduling gate Kueue's pod webhook puts on every Pod it manages at its CREATE, and only
// Kueue removes, when it admits the Pod's workload (pod_webhook.go Default, pod_controller.go
// ungate): a Pod of a queue runs only once Kueue has taken it from the queue.
inline constexpr std::string_view kKueueAdmissionGate = "kueue.x-k8s.io/admission";

// The user Kueue's controller manager sends its requests as in Kueue's own install (namespace
// kueue-system, service account kueue-controller-manager; the Helm chart's default release
// name gives the same). A Kueue installed elsewhere is named in the policy's `controllers` as
// the controller of kueue.x-k8s.io Workloads.
inline constexpr std::string_view kKueueControllerUser =
    "system:serviceaccount:kueue-system:kueue-controller-manager";

// `username` (AdmissionRequest.userInfo.username) is Kueue's controller (above).
bool sent_by_kueue(std::string_view username, const CompiledPolicy& policy);

// The Pod UPDATE removes Kueue's admission gate: `old_object` has it in spec.schedulingGates,
// `object` does not.
bool kueue_gate_removed(const Json& object, const Json& old_object);

struct QueueSite {
  JsonPointer metadata;  // the metadata (possibly absent in the object) whose labels Kueue reads
  // True when each pod template names its own queue (KueueQueue::kPodTemplateLabels: Kueue's
  // pod integration reads each pod's labels, which come from its template); false when the
  // workload names one for all its pod specs.
  bool per_pod_spec = false;
};

// Where the queue of the workload holding the pod spec at `location` is read, or nullopt when
// it is not this object's to name: its controller is a kind gpuadmit knows (the table's or a
// policy `workloads` kind) and `sender` (AdmissionRequest.userInfo.username) is that kind's
// controller. Kueue then finds the queue on the closest ancestor it manages (jobframework
// FindAncestorJobManagedByKueue, through ReplicaSets to their Deployment), and gpuadmit judged
// that ancestor's queue when it was created. An object with no controller, with a controller
// gpuadmit does not know (Argo Workflows, Tekton, …), or whose controller did not send it (a
// tenant's own ownerReference; lint, where no one sent it) names its own: a Pod is Kueue's pod
// integration's, its own labels.
std::optional<QueueSite> kueue_queue_site(const Json& object, const PodSpecLocation& location,
                                          const CompiledPolicy& policy, std::string_view sender);

// The controller ownerReference that makes Kueue leave the object alone, when `sender` is not
// that controller: Kueue leaves a Pod whose controller is a kind it integrates to that kind's
// workload (pod_webhook.go Default, "Do not suspend a Pod whose owner is already managed by
// Kueue", looking through a ReplicaSet to its controller) and does not suspend a job whose
// ancestor it manages (jobframework WorkloadShouldBeSuspended), whatever queue the object names.
// Such an object, sent by anyone but that controller, runs outside every queue (GPU025).
// nullopt when the object has no controller, its controller is no kind Kueue integrates (the
// table's KueueQueue::kOwnLabels kinds, and ReplicaSet), its controller sent it, or `sender` is
// "" (lint: judged as if it had no owner).
std::optional<OwnerReference> kueue_unbelieved_owner(const Json& object,
                                                     const CompiledPolicy& policy,
                                                     std::string_view sender);

// An UPDATE of a controller's child: `old_object`'s controller is a kind whose children Kueue
// leaves to it (the table's KueueQueue::kOwnLabels kinds, and ReplicaSet:
// kueue_unbelieved_owner's). At its CREATE such a child was believed queued through its ancestor,
// and Kueue's own webhooks decided at CREATE too (its pod webhook registers CREATE only). What the
// UPDATE may change:
// - its controller (`detached`), whoever sends it: the garbage collector orphaning it, a tenant
//   removing the ownerReference, or the controller releasing a child a tenant relabeled out of
//   its selector (ControllerRefManager) leaves a standalone workload, which Kueue does not manage
//   unless it names a queue itself. GPU025 judges it as the sender's CREATE (tenant-attack cases
//   136, 139, 140, 141).
// - its spec (`spec_changed`, only when `by_other`: sent by anyone but the controller; never for
//   a Pod, whose UPDATE the API server limits to what adds no GPU): a JobSet's Job given more
//   parallelism, or unsuspended, runs pods Kueue's workload of the JobSet does not count (case
//   135). Only the controller changes a child's spec — but anyone may suspend it: Kueue does,
//   when the ancestor's workload is not admitted (case 148).
// A Pod's other changes by others are Kueue's own — it removes its scheduling gate from the pods
// of a StatefulSet or Deployment it admitted (case 137) — and stay allowed.
// nullopt for any other UPDATE, and when `sender` is "" (a review without userInfo).
struct ChildUpdate {
  OwnerReference owner;  // the old object's controller (views into `old_object`)
  bool detached = false;
  bool by_other = false;  // `sender` is not the controller of `owner`'s kind
  bool spec_changed = false;
};
std::optional<ChildUpdate> child_update(const Json& object, const Json& old_object,
                                        const CompiledPolicy& policy, std::string_view sender);

// A kind with a Kueue integration that reads the queue from its own metadata.labels, by API group
// ("" is the core group) and kind.
struct KueueManagedKind {
  std::string_view group;
  std::string_view kind;
};
// The table's kinds with KueueQueue::kOwnLabels (engine/workload_kinds.h), in its order; the
// native policies write the same list into CEL (render/native_model.cc).
const std::vector<KueueManagedKind>& kueue_managed_kinds();

// The value of the label `key` of the metadata at `metadata`, or "" when none.
std::string kueue_label(const Json& object, const JsonPointer& metadata, std::string_view key);

// The queue the metadata's label names, or "" when none.
std::string kueue_queue_name(const Json& object, const JsonPointer& metadata);

}  // namespace gpuadmit
