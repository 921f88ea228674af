#pragma once
// Findings are data (as Kyverno's rule outcomes): which rule, how severe, what to do, where.

#include <string>
#include <string_view>
#include <vector>

#include "policies/model.h"

namespace gpuadmit {

// deny: rejects the object; warn: admitted with a warning; error: the object could not be
// evaluated (e.g. a pod spec of the wrong type), which also rejects it.
enum class Severity { kDeny, kWarn, kError };
std::string_view severity_name(Severity s);
// The severity of a finding of a rule whose enforcement action is `action`: warn → kWarn, every
// other action that reports (deny, fix, strip) → kDeny. Rules whose action is `off` do not run.
Severity severity_for(Action action);

// What a rule reports: the message names the container, resource, values and what to do.
struct Violation {
  std::string message;
  std::string path;  // JSON path in the object, dotted: "spec.containers[0].resources.limits"
  // The policy field that caused it (`--explain`): "spec.tenants[ml].limits.maxGPUsPerPod = 8".
  // Optional: when empty, the pipeline names the enforcement field that set the rule's action,
  // if the policy sets one (rules/rule_support.h policy_ref builds it).
  std::string policy_path = {};
};

struct Finding {
  std::string rule;  // "GPU001"; "PODSPEC" for an uninterpretable pod spec
  Severity severity = Severity::kDeny;
  std::string message;
  std::string path;
  // The policy field that caused it, "" when none (a built-in rule at its default action).
  std::string policy_path = {};
  // A deny turned into a warning because the tenant is in audit mode (docs/rollout.md).
  bool audit = false;
};

// A mutation applied to a pod spec and the policy field that asked for it (`--explain`):
// {"tolerations", "spec.classes.h100.taints[1]"}; policy_path "" when the mutator named none.
struct MutationRecord {
  std::string mutation;
  std::string policy_path;
};

}  // namespace gpuadmit
