#pragma once
// Paths of policy fields, for `--explain` (docs/explain.md): how a finding or a mutation names
// the field of the policy file that caused it. Tenants (a list) are named by their name,
// classes and priority classes (maps) by key; a key that is not a plain identifier is bracketed
// as the policy loader's error paths write it (docs/decisions-policy.md, "Error paths").
//
//   policy_path::tenant(t) + ".limits.maxGPUsPerPod"   // spec.tenants[vision].limits.maxGPUsPerPod
//   policy_path::key(policy_path::cls("h100") + ".nodeSelector", "nvidia.com/gpu.product")
//       // spec.classes.h100.nodeSelector[nvidia.com/gpu.product]

#include <string>
#include <string_view>

#include "policies/model.h"

namespace gpuadmit::policy_path {

// parent.key, or parent[key] when the key holds a character a dotted path cannot carry.
inline std::string key(std::string_view parent, std::string_view key) {
  const bool plain = !key.empty() && key.find_first_of(".[]\"/ ") == std::string_view::npos;
  return std::string(parent) + (plain ? "." + std::string(key) : "[" + std::string(key) + "]");
}
inline std::string tenant(const Tenant& t) { return "spec.tenants[" + t.name + "]"; }
inline std::string cls(std::string_view name) { return key("spec.classes", name); }
inline std::string index(std::string_view parent, size_t i) {
  return std::string(parent) + "[" + std::to_string(i) + "]";
}

}  // namespace gpuadmit::policy_path
