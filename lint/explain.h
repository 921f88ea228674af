#pragma once
// `--explain` (docs/explain.md): the policy field behind a finding or mutation, with its value
// as written in the policy file.
//
//   std::optional<Json> doc = policy_document("policy.yaml");   // "" → the embedded default
//   explain_text(*doc, "spec.tenants[ml].limits.maxGPUsPerPod")
//       // "spec.tenants[ml].limits.maxGPUsPerPod = 8"

#include <optional>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit::lint {

// The policy file (or, for "", the embedded default policy) as JSON; nullopt when unreadable.
std::optional<Json> policy_document(const std::string& path);

// The value at a policy path: list elements are named by their `name` ("spec.tenants[vision]")
// or index, map members by key; nullptr when absent.
const Json* policy_value(const Json& document, std::string_view policy_path);

// "<path> = <value as compact JSON>"; the path alone when it names nothing in the document;
// for an empty path, "no policy field (the rule's built-in default)".
std::string explain_text(const Json& document, std::string_view policy_path);

}  // namespace gpuadmit::lint
