#pragma once
// Whether a pending pod could be placed on a node, as kube-scheduler's filter plugins decide it
// (k8s.io/kubernetes pkg/scheduler/framework/plugins), for `gpuadmit fleet --live`'s pending
// pods and stranded GPUs (docs/fleet.md, "Live mode"). The toleration and requirement semantics
// are the engine's (engine/scheduling.h); this file applies them to a concrete node.
//
//   NodeUnschedulable  nodeunschedulable/node_unschedulable.go Filter: a cordoned node, unless the
//                      pod tolerates {node.kubernetes.io/unschedulable, NoSchedule}
//   TaintToleration    tainttoleration/taint_toleration.go Filter: component-helpers
//                      FindMatchingUntoleratedTaint over the NoSchedule and NoExecute taints
//                      (PreferNoSchedule is only scored)
//   NodeAffinity       nodeaffinity/node_affinity.go Filter: component-helpers
//                      GetRequiredNodeAffinity(pod).Match(node) — spec.nodeSelector and the
//                      required node affinity terms
//   NodeResourcesFit   noderesources/fit.go fitsRequest, for the GPU (extended) resources only:
//                      each request ≤ allocatable − requested
//
// Other filters (CPU and memory, ports, volumes, inter-pod affinity, topology spread) are not
// judged: a pod that passes these four may still be pending for them.

#include <string>
#include <vector>

#include "engine/json.h"
#include "engine/resources.h"
#include "fleet/live_model.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet {

// The first NoSchedule/NoExecute taint of the node that `tolerations` (a JSON list, may be null)
// does not tolerate, or nullptr (TaintToleration.Filter: FindMatchingUntoleratedTaint).
const Taint* untolerated_taint(const Json* tolerations, const LiveNode& node);

// NodeUnschedulable.Filter: a cordoned node refuses pods that do not tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
bool refused_as_unschedulable(const Json* tolerations, const LiveNode& node);

// NodeAffinity.Filter (component-helpers nodeaffinity.GetRequiredNodeAffinity(pod).Match): every
// nodeSelector label equal, and one required nodeSelectorTerm matching — its matchExpressions
// against the labels, its matchFields against metadata.name. `placement` holds the pod spec's
// nodeSelector and affinity.
bool node_affinity_matches(const Json& placement, const LiveNode& node);

// NodeResourcesFit for GPU resources: every request ≤ `free` of that resource (absent: 0).
bool gpu_requests_fit(const std::vector<PodGpuRequest>& requests, const ResourceAmounts& free);

// The class a node belongs to: the policy class all of whose nodeSelector labels the node has
// with one of the class's values (with MIG strategy single, the product label as the webhook
// writes it for a profile: engine/scheduling.h class_node_labels); of several, the one naming
// most labels, then the first (as engine/context.cc picks a class from a pod's nodeSelector).
// nullptr when none.
const GpuClass* class_of_node(const LiveNode& node, const CompiledPolicy& policy);

}  // namespace gpuadmit::fleet
