#pragma once
// `gpuadmit render --native full|fallback` (docs/native.md): the policy compiled to
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their bindings, one set per
// tenant (and one for namespaces of no tenant), the policy's values written into the CEL as
// literals.
//
//   NativeOptions options{.mode = NativeMode::kFull};
//   for (const Json& object : native_policies(policy, options)) emit(object);

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

enum class NativeMode { kFull, kFallback };

// The mode as --native and --register-native name it ("full", "fallback"); nullopt for another.
std::optional<NativeMode> native_mode_named(std::string_view name);
std::string_view native_mode_name(NativeMode mode);

// The admissionregistration.k8s.io versions MutatingAdmissionPolicy is written in: v1 (1.36) and
// v1beta1 (1.34-1.35).
bool is_mutating_api(std::string_view version);

struct NativeOptions {
  NativeMode mode = NativeMode::kFull;
  // admissionregistration.k8s.io version of the MutatingAdmissionPolicies: "v1" (GA, 1.36) or
  // "v1beta1" (1.34–1.35, feature gate MutatingAdmissionPolicy and the v1beta1 API enabled).
  std::string mutating_api = "v1";
  // gpuadmit's own namespace, left out as the webhook configurations leave it out.
  std::string release_namespace = "gpuadmit";
  // The bindings skip objects labelled gpuadmit.io/ignore=true (objectSelector), as the
  // webhooks do with the same `render --opt-out-label` (docs/install.md: off by default, since
  // any tenant can set the label).
  bool opt_out_label = false;
};

// Where one set of policies applies: a tenant's namespaces (first matching tenant, exempt
// namespaces left out), or those of no tenant.
struct NativeScope {
  const Tenant* tenant = nullptr;  // null: namespaces of no tenant
  std::string name;                // DNS-safe, unique: "ml-team", "no-tenant"
  Json namespace_selector;         // the binding's namespaceSelector
  Json match_conditions;           // the policies' matchConditions (may be empty)
};

// The scopes of a policy, tenants in policy order; a tenant that no namespace can reach (every
// name exempt or taken by an earlier tenant, or after a tenant matching every name) has none.
std::vector<NativeScope> native_scopes(const CompiledPolicy& policy, const NativeOptions& options);

// Every object, in apply order: per scope the deny VAP and binding, the warn VAP and binding,
// and (full) the MAP and binding.
std::vector<Json> native_policies(const CompiledPolicy& policy, const NativeOptions& options);

}  // namespace gpuadmit::render::native
