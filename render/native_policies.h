#pragma once
// `gpuadmit render --native full|fallback` (docs/native.md): the policy compiled to
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their bindings: one set for
// every tenant, the policy's values written into the CEL as literals and the tenants' as data
// (render/native_tenants.h).
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

// Where the policies apply: every namespace but the excluded ones (exempt, gpuadmit's own); the
// namespace's tenant is the policies' to find (render/native_tenants.h).
struct NativeScope {
  Json namespace_selector;  // the bindings' namespaceSelector
  Json match_conditions;    // the policies' matchConditions (may be empty)
};
NativeScope native_scope(const CompiledPolicy& policy, const NativeOptions& options);

// Every object, in apply order: the deny, warn and audit (a tenant in audit mode: Warn, Audit)
// ValidatingAdmissionPolicies, each with its binding, and (full) the MutatingAdmissionPolicy and
// its binding — one of each for the whole policy, whatever its tenants; one that would hold
// nothing is left out.
std::vector<Json> native_policies(const CompiledPolicy& policy, const NativeOptions& options);

}  // namespace gpuadmit::render::native
