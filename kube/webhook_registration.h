#pragma once
// gpuadmit's own cluster-scoped admissionregistration.k8s.io objects, written by `gpuadmit
// register` (cli/register_command.cc: a process with no network listener, its own
// ServiceAccount; docs/install.md "Least privilege"): the MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration, created once the webhook's Service has a ready endpoint so that
// the API server never calls a webhook that cannot answer yet, and the native policies
// (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their bindings); each written again
// whenever it drifts from what it should be. Each is owned by a cluster-scoped object of the
// release (a ClusterRole), so that deleting the release — helm uninstall, a GitOps prune — has the
// garbage collector delete them (a cluster-scoped dependent may only have a cluster-scoped owner).
//
//   WebhookRegistration registration(config);
//   RegistrationResult r = registration.apply({mutating, validating}, stamp);
//   r = registration.prune(native_kinds, "app.kubernetes.io/managed-by=gpuadmit,...", desired,
//                          stamp);
//
// "Drifts" is exact (kube/admission_defaults.h): the webhooks list or the spec compared whole
// after the API server's defaulting, so an added webhook, rule or matchConditions entry, or a
// changed selector, is put back; gpuadmit's labels and annotations key by key (others' are kept);
// the owner reference whole.
//
// Annotations on every object written, and what they decide:
//   gpuadmit.io/policy-generation: "7"   the policy's generation (the policy's own annotation
//                                        gpuadmit.io/generation, 0 without). An object that
//                                        carries a higher one was written for a newer policy: it
//                                        is left alone, never overwritten nor pruned, so that an
//                                        outdated writer cannot undo a newer one.
//   gpuadmit.io/policy-hash: "sha256:…"  the policy text's digest: which policy wrote it.
// and the one an operator sets (docs/install.md, "Break glass"):
//   gpuadmit.io/break-glass: "true"      this object is left alone: not updated, not pruned.
//
// Requests (the version is the object's apiVersion; the plural from admission_collection):
//   GET    /apis/rbac.authorization.k8s.io/v1/clusterroles/OWNER        (the owner's uid)
//   GET    /apis/admissionregistration.k8s.io/VERSION/PLURAL/NAME
//   GET    /apis/discovery.k8s.io/v1/namespaces/NS/endpointslices?...    (before creating a
//                                                                          webhook configuration)
//   POST   /apis/admissionregistration.k8s.io/VERSION/PLURAL              (when it is missing)
//   PUT    /apis/admissionregistration.k8s.io/VERSION/PLURAL/NAME         (when it differs)
//   GET    /apis/admissionregistration.k8s.io/VERSION/PLURAL?labelSelector=...   (prune)
//   DELETE /apis/admissionregistration.k8s.io/VERSION/PLURAL/NAME         (prune, uid precondition)
// The PUT carries the resourceVersion read: a concurrent writer makes it fail with 409, and the
// next round reads again.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "kube/in_cluster.h"

namespace gpuadmit::kube {

inline constexpr const char* kPolicyGenerationAnnotation = "gpuadmit.io/policy-generation";
inline constexpr const char* kPolicyHashAnnotation = "gpuadmit.io/policy-hash";
inline constexpr const char* kBreakGlassAnnotation = "gpuadmit.io/break-glass";

// Which policy the objects are rendered from.
struct PolicyStamp {
  std::uint64_t generation = 0;
  std::string hash;  // "sha256:<hex>"
};

struct WebhookRegistrationConfig {
  InClusterAccess access;
  std::chrono::milliseconds timeout{5000};  // per connect/read/write
  // The ClusterRole whose deletion deletes the objects; empty: no owner.
  std::string owner_cluster_role;
  // A webhook configuration is created only once this Service (the one its webhooks call) has a
  // ready endpoint (kube/service_endpoints.h); an empty name: no wait.
  std::string service_namespace, service_name;
};

// An object kind gpuadmit registers: its apiVersion ("admissionregistration.k8s.io/v1") and kind.
struct AdmissionKind {
  std::string api_version, kind;
};

// The REST collection of a cluster-scoped admissionregistration.k8s.io object
// ("/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies"); nullopt for a kind
// gpuadmit does not register or another API group.
std::optional<std::string> admission_collection(std::string_view api_version,
                                                std::string_view kind);

// What one apply() or prune() did, for the log. Each entry names the object
// ("MutatingWebhookConfiguration gpuadmit").
struct RegistrationResult {
  std::vector<std::string> created, updated, unchanged, deleted;
  std::vector<std::string> break_glass;  // left alone: annotated gpuadmit.io/break-glass "true"
  // Left alone: written for a newer policy generation ("... (generation 8)").
  std::vector<std::string> newer;
  // Not created yet: the webhook's Service has no ready endpoint ("...: <why>").
  std::vector<std::string> waiting;
  std::vector<std::string> errors;  // one line each
};

class WebhookRegistration {
 public:
  explicit WebhookRegistration(WebhookRegistrationConfig config);
  ~WebhookRegistration();
  WebhookRegistration(const WebhookRegistration&) = delete;
  WebhookRegistration& operator=(const WebhookRegistration&) = delete;

  // Makes each of `desired` (an object of admission_collection's kinds as gpuadmit render makes
  // it) what the cluster has, stamped with `stamp`: created when missing (a webhook
  // configuration once its Service is ready), replaced when it drifted (above), left alone when
  // it is annotated break-glass or carries a newer generation. Not thread-safe.
  RegistrationResult apply(const std::vector<Json>& desired, const PolicyStamp& stamp);

  // Deletes the objects of `kinds` that match `label_selector` ("k=v,k2=v2") and are not in
  // `desired` (same kind and name): what an earlier policy rendered and this one does not —
  // unless annotated break-glass or written for a newer generation than `stamp`'s. A kind the
  // API server does not serve (404: MutatingAdmissionPolicy before 1.34) has none. The DELETE
  // names the uid listed, so an object recreated meanwhile is not deleted.
  RegistrationResult prune(const std::vector<AdmissionKind>& kinds,
                           const std::string& label_selector, const std::vector<Json>& desired,
                           const PolicyStamp& stamp) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The generation an object's gpuadmit.io/policy-generation annotation names; 0 when it has none
// or it is not a whole number.
std::uint64_t stamped_generation(const Json& object);

}  // namespace gpuadmit::kube
