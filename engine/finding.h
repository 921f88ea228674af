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
};

struct Finding {
  std::string rule;  // "GPU001"; "PODSPEC" for an uninterpretable pod spec
  Severity severity = Severity::kDeny;
  std::string message;
  std::string path;
};

}  // namespace gpuadmit
