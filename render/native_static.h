#pragma once
// The native policies as manifest-based admission (KEP-5793, Kubernetes 1.36 alpha, feature gate
// ManifestBasedAdmissionControlConfig): static files the API server loads at start from the
// directories its AdmissionConfiguration names, enforced from the first request and not
// visible or changeable through the API (docs/native.md, "Static manifests"). The loader
// (k8s.io/apiserver pkg/admission/plugin/policy/manifest/loader) takes only
// admissionregistration.k8s.io/v1 objects whose names end in ".static.k8s.io", bindings whose
// policyName does too, no paramKind and no paramRef (the native policies use neither: the
// tenants are literal data); one directory per plugin, holding only that plugin's kinds.

#include <string>
#include <vector>

#include "engine/expected.h"
#include "engine/json.h"

namespace gpuadmit::render::native {

// Every manifest's name ends with this (k8s.io/apiserver manifest.StaticConfigSuffix).
inline constexpr std::string_view kStaticSuffix = ".static.k8s.io";
// The directories under the static root, one per admission plugin.
inline constexpr std::string_view kStaticValidatingDir = "validating-policies";
inline constexpr std::string_view kStaticMutatingDir = "mutating-policies";

struct StaticManifests {
  std::vector<Json> validating;  // ValidatingAdmissionPolicies and their bindings, renamed
  std::vector<Json> mutating;    // MutatingAdmissionPolicies and their bindings, renamed
  // The AdmissionConfiguration naming `root`/validating-policies (and mutating-policies when
  // there are mutating policies) as the two plugins' staticManifestsDir.
  Json admission_configuration;
};

// `policies` (native_policies()) as static manifests under the absolute directory `root`; an
// error when one cannot be (a MutatingAdmissionPolicy of another version than v1, a relative
// root).
Expected<StaticManifests, std::string> static_manifests(const std::vector<Json>& policies,
                                                        const std::string& root);

}  // namespace gpuadmit::render::native
