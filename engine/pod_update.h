#pragma once
// What of a Pod an UPDATE may change that decides where it runs or which devices it gets (SPEC
// §7.1: "a Pod must not gain by UPDATE what its CREATE would have been denied").
//
//   if (pod_placement_changed(object, old_object)) ...   // judged by the rules, never patched
//
// A Pod's spec is immutable but for what ValidatePodUpdate (k8s.io/kubernetes
// pkg/apis/core/validation/validation.go) munges before its DeepEqual: containers' and init
// containers' `image`, `activeDeadlineSeconds`, `terminationGracePeriodSeconds` (negative → 1),
// container CPU and memory (in-place resize, since 1.33 only through pods/resize), and
//   - `tolerations`: additions, at any time ("Allow only additions to tolerations updates");
//   - `schedulingGates`: deletions ("Allow only deletions to schedulingGates updates"; Pod
//     scheduling readiness, KEP-3521, GA in 1.30);
//   - while the old Pod has scheduling gates: `nodeSelector` additions and node affinity
//     narrowed (required terms gain expressions; preferred terms any change) — "Handle
//     validations specific to gated pods" (mutable Pod scheduling directives, KEP-3838, beta and
//     on by default in 1.27 under PodSchedulingReadiness, GA with it in 1.30).
// Of these only the last three decide placement; images and CPU/memory decide no GPU, and no
// device field (resources of extended resources, resourceClaims, env, volumes, runtimeClassName,
// securityContext) may change. `spec.nodeName` cannot change by UPDATE either: it is set at
// CREATE or through pods/binding, which a namespace's `edit` role does not grant (docs/rules.md,
// GPU009). Annotations may change at any time, and `cdi.k8s.io/` ones ask a CDI-enabled runtime
// for devices (GPU024): they count too. So do labels, which change at any time, where Kueue reads
// them to queue and prioritise the Pod's own workload (kPodKueueLabels): Kueue's pod webhook lets
// a gated Pod's `kueue.x-k8s.io/priority-class` change (jobframework/validation.go
// ValidateUpdateForWorkloadPriorityClassName) and its reconciler re-reads it on every sync
// (reconciler.go ensureOneWorkload -> UpdateWorkloadPriority), so a label GPU010 denies at CREATE
// must not arrive by UPDATE (tenant-attack case 151).

#include <array>
#include <string_view>

#include "engine/json.h"
#include "engine/kueue.h"

namespace gpuadmit {

// The spec members compared: rendered into the validating webhook's and the native policies'
// matchConditions as well (render/webhook_configuration.h pod_update_condition), so the API
// server sends gpuadmit only the UPDATEs it judges.
inline constexpr std::array<std::string_view, 4> kPodPlacementFields = {
    "tolerations", "nodeSelector", "affinity", "schedulingGates"};

// The Pod labels Kueue reads for the Pod's own workload: its LocalQueue and its
// WorkloadPriorityClass (GPU025, GPU010). Rendered into the matchConditions too.
inline constexpr std::array<std::string_view, 2> kPodKueueLabels = {kQueueNameLabel,
                                                                    kWorkloadPriorityClassLabel};

// Pod annotations with this prefix name CDI devices (rules/gpu_visibility.cc).
inline constexpr std::string_view kCdiAnnotationPrefix = "cdi.k8s.io/";

// True when `object` and `old_object` (Pods) differ in a member of kPodPlacementFields of their
// spec (present in one and not the other, or not equal), in a `cdi.k8s.io/` annotation or in a
// label of kPodKueueLabels. An absent or non-object spec, annotations or labels read as empty.
bool pod_placement_changed(const Json& object, const Json& old_object);

}  // namespace gpuadmit
