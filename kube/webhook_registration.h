#pragma once
// gpuadmit's own cluster-scoped admissionregistration.k8s.io objects, written by the server
// (`gpuadmit serve --register-webhooks`, `--register-native`; docs/install.md "No install
// window"): the MutatingWebhookConfiguration and ValidatingWebhookConfiguration once the server
// is ready, so the API server never calls a webhook that cannot answer yet, and the native
// policies (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their bindings) for the policy
// the server has loaded; each written again whenever it drifts from what it should be (a policy's
// exempt namespaces, a rotated CA). Each is owned by a cluster-scoped object of the release (a
// ClusterRole), so that deleting the release — helm uninstall, a GitOps prune — has the garbage
// collector delete them (a cluster-scoped dependent may only have a cluster-scoped owner).
//
//   WebhookRegistration registration(config);
//   RegistrationResult r = registration.apply({mutating, validating});
//   r = registration.prune(native_kinds, "app.kubernetes.io/managed-by=gpuadmit,...", desired);
//
// Requests (the version is the object's apiVersion; the plural from admission_collection):
//   GET    /apis/rbac.authorization.k8s.io/v1/clusterroles/OWNER        (the owner's uid)
//   GET    /apis/admissionregistration.k8s.io/VERSION/PLURAL/NAME
//   POST   /apis/admissionregistration.k8s.io/VERSION/PLURAL              (when it is missing)
//   PUT    /apis/admissionregistration.k8s.io/VERSION/PLURAL/NAME         (when it differs)
//   GET    /apis/admissionregistration.k8s.io/VERSION/PLURAL?labelSelector=...   (prune)
//   DELETE /apis/admissionregistration.k8s.io/VERSION/PLURAL/NAME         (prune, uid precondition)
// The PUT carries the resourceVersion read: a concurrent writer (another replica) makes it fail
// with 409, and the next round reads again.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "kube/in_cluster.h"

namespace gpuadmit::kube {

struct WebhookRegistrationConfig {
  InClusterAccess access;
  std::chrono::milliseconds timeout{5000};  // per connect/read/write
  // The ClusterRole whose deletion deletes the configurations; empty: no owner.
  std::string owner_cluster_role;
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

// What one apply() or prune() did, for the log.
struct RegistrationResult {
  // "MutatingWebhookConfiguration gpuadmit"
  std::vector<std::string> created, updated, unchanged, deleted;
  std::vector<std::string> errors;  // one line each
};

class WebhookRegistration {
 public:
  explicit WebhookRegistration(WebhookRegistrationConfig config);
  ~WebhookRegistration();
  WebhookRegistration(const WebhookRegistration&) = delete;
  WebhookRegistration& operator=(const WebhookRegistration&) = delete;

  // Makes each of `desired` (an object of admission_collection's kinds as gpuadmit render makes
  // it) what the cluster has: created when missing, replaced when a field it sets (its webhooks
  // or spec, labels, the owner reference) differs from the cluster's — fields the API server
  // defaults and `desired` leaves out are not differences.
  RegistrationResult apply(const std::vector<Json>& desired) const;

  // Deletes the objects of `kinds` that match `label_selector` ("k=v,k2=v2") and are not in
  // `desired` (same kind and name): what an earlier policy rendered and this one does not. A
  // kind the API server does not serve (404: MutatingAdmissionPolicy before 1.34) has none. The
  // DELETE names the uid listed, so an object recreated meanwhile is not deleted.
  RegistrationResult prune(const std::vector<AdmissionKind>& kinds,
                           const std::string& label_selector,
                           const std::vector<Json>& desired) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when every member `desired` sets is in `actual` with the same value (objects compared
// member by member, recursively; arrays element by element, of the same length).
bool sets_equal(const Json& desired, const Json& actual);

}  // namespace gpuadmit::kube
