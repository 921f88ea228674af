#pragma once
// The rules as ValidatingAdmissionPolicy validations (docs/native.md): one validation per rule
// id, over the model of render/native_model.h, with the policy's values as literals and the
// tenants' as data. Each message starts with the rule id ("GPU005: ...").
//
//   for (const NativeValidation& v : rule_validations(policy)) ...

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

struct NativeValidation {
  std::string id;   // "GPU005"
  Json validation;  // {expression, message or messageExpression, reason}
};

// The validations of the rules CEL can express (docs/native.md), in id order, each for every
// namespace: what differs between tenants is read from their records (render/native_tenants.h),
// and a rule that needs a member a record lacks (limits, a quota) holds there. Rules no tenant
// can use (no tenant sets limits) are left out.
std::vector<NativeValidation> rule_validations(const CompiledPolicy& policy);

// Where a failed validation goes: the deny policy, the warn policy, or the audit policy (warn
// and audit annotation: a tenant in audit mode, docs/rollout.md).
enum class Placement { kDeny, kWarn, kAudit };

// CEL bool over the namespace's tenant record: rule `id`'s failures go to `placement` there (the
// tenant's enforcement.rules, else the policy's action; audit mode). "true" or "false" when that
// is the same for every namespace.
std::string placed(const CompiledPolicy& policy, std::string_view id, Placement placement);

// The class-placement conflict of context entry `c` (GPU011; engine/scheduling.h
// class_conflict) as a CEL boolean, true when the pod's own nodeSelector and required node
// affinity contradict its class's labels. "false" when no class has labels.
std::string class_conflict(const CompiledPolicy& policy, std::string_view c);

// The class's node labels for context entry `c` (engine/scheduling.h class_node_labels), as a
// CEL list of {k: key, v: [values]}; [] for a class without labels. Only for a known class.
std::string class_labels(const CompiledPolicy& policy, std::string_view c);

}  // namespace gpuadmit::render::native
