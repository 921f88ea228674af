#pragma once
// Scheduling semantics gpuadmit mirrors from Kubernetes, shared by mutators and rules:
// toleration matching (k8s.io/api/core/v1 Toleration.ToleratesTaint), node-selector requirement
// matching (k8s.io/component-helpers/scheduling/corev1/nodeaffinity), and whether a pod's own
// placement constraints can be satisfied together with its class's labels (GPU011).
//
//   tolerates({"operator": "Exists"}, Taint{"nvidia.com/gpu", "", "NoSchedule"})   // true
//   class_conflict(pod, class_node_labels(*ctx.gpu_class, ctx.mig_profile))     // nullopt: fine

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "engine/pod_view.h"
#include "policies/model.h"

namespace gpuadmit {

// The node label GPU Feature Discovery sets to the GPU model ("NVIDIA-A100-SXM4-80GB").
inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";

// Go's strconv.ParseInt(s, 10, 64), as Kubernetes reads toleration and Gt/Lt values: an
// optional sign, then one or more decimal digits, within int64. No spaces, no underscores (those
// need base 0), no "0x".
std::optional<int64_t> parse_go_int64(std::string_view s);

// Toleration.ToleratesTaint: effects match when the toleration's effect is empty or equal;
// an empty key matches every key; operator Exists matches any value, Equal (or empty operator)
// compares values, Gt/Lt compare base-10 int64 values (KEP-5471), anything else matches nothing.
// Absent and null fields count as "".
bool tolerates(const Json& toleration, const Taint& taint);

// The toleration that tolerates exactly `taint`: Equal with the value, or Exists when the taint
// has no value (Equal with "" would too, but Exists is what kubectl users and the in-tree
// ExtendedResourceToleration plugin write). An empty effect is left out: it tolerates every
// effect (ToleratesTaint rule 1). The tolerations mutation and the native policies write it.
Json toleration_for(const Taint& taint);

// The string values of a NodeSelectorRequirement's `values` (others skipped), views into it.
std::vector<std::string_view> requirement_values(const Json& requirement);

// True when the taint keeps an untolerating pod off its nodes: NoSchedule or NoExecute.
// kube-scheduler's TaintToleration Filter looks only at those two effects
// (pkg/scheduler/framework/plugins/tainttoleration: "only interested in NoSchedule and
// NoExecute taints"); PreferNoSchedule is a Score penalty, so a pod that tolerates nothing
// still lands on such a node when it asks for it by name or the others are full.
inline bool keeps_pods_off(const Taint& taint) {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

// True when any toleration in `tolerations` (a JSON list, may be null) tolerates `taint`.
bool any_tolerates(const Json* tolerations, const Taint& taint);

// True when a node with label `key` = `value` satisfies one NodeSelectorRequirement
// ({key, operator: In|NotIn|Exists|DoesNotExist|Gt|Lt, values}) for that key. Requirements on
// other keys are not considered (returns true).
bool requirement_allows(const Json& requirement, std::string_view key, std::string_view value);

// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
// of a pod spec when it is a list, else nullptr.
const Json* required_node_selector_terms(const Json& spec);

// True when a nodeSelectorTerm has no requirement at all: Kubernetes' nodeaffinity skips such a
// term, so it matches no node (component-helpers nodeaffinity.newNodeSelectorTerms).
bool is_empty_node_selector_term(const Json& term);

// The node labels a class places its pods on (SPEC §4.3, §4.5): the class's nodeSelector, except
// that with MIG strategy single and a profile the product label values become
// `<product>-MIG-<profile>`, as GPU Feature Discovery labels such nodes (k8s-device-plugin
// internal/lm/resource.go productLabel(model, "MIG", profile), where the profile name has "+"
// replaced by "." as in internal/resource/nvml-mig-device.go GetName: 1g.10gb+me → 1g.10gb.me).
LabelSelectorValues class_node_labels(const GpuClass& gpu_class, std::string_view mig_profile);

// When some node could run the pod as written but none once the class's labels are required
// too (SPEC §4.5, GPU011: nodeSelector AND one required term AND the class, decided per label
// key exactly), a message naming, for the nodeSelector or each term, the label that rules the
// class out; nullopt otherwise. `label_values` is the class's
// node selector (for MIG single: the MIG product values, see class_node_labels).
std::optional<std::string> class_conflict(const PodView& pod,
                                          const LabelSelectorValues& label_values);

}  // namespace gpuadmit
