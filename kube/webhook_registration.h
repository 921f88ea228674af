#pragma once
// gpuadmit's own MutatingWebhookConfiguration and ValidatingWebhookConfiguration
// (`gpuadmit serve --register-webhooks`, docs/install.md "No install window"): written by the
// server once it is ready, so the API server never calls a webhook that cannot answer yet, and
// written again whenever they drift from what they should be (a policy's exempt namespaces, a
// rotated CA). Each is owned by a cluster-scoped object of the release (a ClusterRole), so that
// deleting the release — helm uninstall, a GitOps prune — has the garbage collector delete them
// (a cluster-scoped dependent may only have a cluster-scoped owner).
//
//   WebhookRegistration registration(config);
//   std::vector<std::string> errors = registration.apply({mutating, validating});
//
// Requests (admissionregistration.k8s.io/v1):
//   GET  /apis/rbac.authorization.k8s.io/v1/clusterroles/OWNER           (the owner's uid)
//   GET  /apis/admissionregistration.k8s.io/v1/<kind>s/NAME
//   POST /apis/admissionregistration.k8s.io/v1/<kind>s                   (when it is missing)
//   PUT  /apis/admissionregistration.k8s.io/v1/<kind>s/NAME              (when it differs)
// The PUT carries the resourceVersion read: a concurrent writer (another replica) makes it fail
// with 409, and the next round reads again.

#include <chrono>
#include <memory>
#include <string>
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

// What one apply() did, for the log.
struct RegistrationResult {
  std::vector<std::string> created, updated, unchanged;  // "MutatingWebhookConfiguration gpuadmit"
  std::vector<std::string> errors;                       // one line each
};

class WebhookRegistration {
 public:
  explicit WebhookRegistration(WebhookRegistrationConfig config);
  ~WebhookRegistration();
  WebhookRegistration(const WebhookRegistration&) = delete;
  WebhookRegistration& operator=(const WebhookRegistration&) = delete;

  // Makes each of `desired` (a MutatingWebhookConfiguration or ValidatingWebhookConfiguration as
  // gpuadmit render makes it) what the cluster has: created when missing, replaced when a field
  // it sets (its webhooks, labels, the owner reference) differs from the cluster's — fields the
  // API server defaults and `desired` leaves out are not differences.
  RegistrationResult apply(const std::vector<Json>& desired) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when every member `desired` sets is in `actual` with the same value (objects compared
// member by member, recursively; arrays element by element, of the same length).
bool sets_equal(const Json& desired, const Json& actual);

}  // namespace gpuadmit::kube
