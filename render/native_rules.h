#pragma once
// The rules as ValidatingAdmissionPolicy validations (docs/native.md): one validation per rule
// id, over the model of render/native_model.h, with the policy's values as literals. Each
// message starts with the rule id ("GPU005: ...").
//
//   for (const NativeValidation& v : rule_validations(policy, tenant)) ...

#include <optional>
#include <string>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

struct NativeValidation {
  std::string id;   // "GPU005"
  Action action;    // kDeny or kWarn (the policy's action for the rule in this scope)
  bool audit;       // the tenant is in audit mode: a deny is reported as a warning
  Json validation;  // {expression, message, reason}
};

// The validations of the rules that apply in namespaces of `tenant` (null: no tenant) and
// that CEL can express (docs/native.md), in id order; rules whose action is `off`, or that
// need something of the policy the scope does not have (a tenant, a limit), are left out.
std::vector<NativeValidation> rule_validations(const CompiledPolicy& policy, const Tenant* tenant);

// The class-placement conflict of context entry `c` (GPU011; engine/scheduling.h
// class_conflict) as a CEL boolean, true when the pod's own nodeSelector and required node
// affinity contradict its class's labels. "false" when no class has labels.
std::string class_conflict(const CompiledPolicy& policy, std::string_view c);

// The class's node labels for context entry `c` (engine/scheduling.h class_node_labels), as a
// CEL list of {k: key, v: [values]}; [] for a class without labels. Only for a known class.
std::string class_labels(const CompiledPolicy& policy, std::string_view c);

}  // namespace gpuadmit::render::native
