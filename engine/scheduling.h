#pragma once
// Scheduling semantics gpuadmit mirrors from Kubernetes, shared by mutators and rules:
// toleration matching (k8s.io/api/core/v1 Toleration.ToleratesTaint), node-selector requirement
// matching (k8s.io/component-helpers/scheduling/corev1/nodeaffinity), and whether a pod's own
// placement constraints can be satisfied together with its class's labels (GPU011).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "engine/pod_view.h"
#include "policies/model.h"

namespace gpuadmit {

// Toleration.ToleratesTaint: effects match when the toleration's effect is empty or equal;
// an empty key with operator Exists matches every taint; keys must be equal otherwise;
// operator Exists matches any value, Equal (or empty operator) compares values.
bool tolerates(const Json& toleration, const Taint& taint);

// True when any toleration in `tolerations` (a JSON list, may be null) tolerates `taint`.
bool any_tolerates(const Json* tolerations, const Taint& taint);

// True when a node with label `key` = `value` satisfies one NodeSelectorRequirement
// ({key, operator: In|NotIn|Exists|DoesNotExist|Gt|Lt, values}) for that key. Requirements on
// other keys are not considered (returns true).
bool requirement_allows(const Json& requirement, std::string_view key, std::string_view value);

// When the pod's own nodeSelector, or every one of its required node-affinity terms, allows no
// value of some class label (SPEC §4.5, GPU011), a message naming the label, the pod's
// constraint and the class's values; nullopt when compatible. `label_values` is the class's
// node selector (for MIG single: the MIG product values).
std::optional<std::string> class_conflict(const PodView& pod, const LabelSelectorValues& label_values);

}  // namespace gpuadmit
