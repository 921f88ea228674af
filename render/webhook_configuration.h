#pragma once
// The MutatingWebhookConfiguration and ValidatingWebhookConfiguration that route a cluster's
// reviews to gpuadmit (SPEC §7), built from the engine's table of workload kinds
// (engine/workload_kinds.h) and the policy. charts/gpuadmit makes the same objects; the chart
// test (tests/k8s/chart_test.mjs) checks that they agree.
//
//   WebhookTarget target{.ns = "gpuadmit", .service = "gpuadmit"};
//   Json mutating = mutating_webhook_configuration(policy, target);

#include <string>
#include <string_view>
#include <vector>

#include "engine/controllers.h"
#include "engine/expected.h"
#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render {

// Where the API server sends reviews, how it trusts the serving certificate, and what the
// webhooks skip.
struct WebhookTarget {
  std::string ns = "gpuadmit";       // the Service's namespace, always excluded from the webhooks
  std::string service = "gpuadmit";  // the Service's name; also the configurations' name
  std::string ca_bundle;             // base64 PEM; empty: no caBundle (cert-manager injects it)
  std::string failure_policy = "Fail";
  // kValidate (`render --templates validate`, GitOps): the mutating webhook gets Pods only
  // (and their ephemeral containers); workload templates go to the validating webhook alone.
  TemplateMode templates = TemplateMode::kMutate;
  int mutating_timeout = 2, validating_timeout = 3;  // timeoutSeconds
  std::vector<std::string> excluded;  // namespaces skipped besides excluded_namespaces' own
  // The opt-out label (kIgnoreLabel) honoured: off by default, as anyone who can label a pod
  // (every tenant, for its own) could switch the policy off for it (docs/install.md).
  bool opt_out_label = false;
};

// The label that opts an object out of both webhooks ("true"), when the target honours it.
inline constexpr std::string_view kIgnoreLabel = "gpuadmit.io/ignore";

// Namespaces no webhook of gpuadmit ever sees, whatever the policy says: kube-system (the
// control plane's own pods, DNS, CNI: a webhook that cannot answer must never stop them) and
// kube-node-lease (node heartbeats; no pods).
inline constexpr std::string_view kAlwaysExcluded[] = {"kube-node-lease", "kube-system"};

// The caBundle of a webhook (base64 PEM) from the PEM of the CA that signed the serving
// certificate; an error (one line) when it holds no certificate.
Expected<std::string, std::string> ca_bundle_from_pem(std::string_view pem);

// A kind the webhooks receive: its API group, the resource (plural, or resource/subresource)
// and the operations.
struct AdmittedKind {
  std::string group;
  std::string version;  // "*" for the table's kinds (matched in any version), else the policy's
  std::string kind;
  std::string resource;                 // "deployments", "pods/ephemeralcontainers"
  std::vector<std::string> operations;  // "CREATE", "UPDATE"
  bool templated = false;               // a workload with pod templates (not a Pod, not DRA)
};

// What the webhooks see: the table's kinds with pod templates and the subresources it names
// (engine/workload_kinds.h), the DRA kinds (issue 13) and the policy's `workloads`, without
// duplicates, in that order. Pods: CREATE; pods/ephemeralcontainers: UPDATE; templated kinds:
// CREATE and UPDATE; DRA claims: CREATE.
std::vector<AdmittedKind> admitted_kinds(const CompiledPolicy& policy);

// The Kubernetes resource name of a policy `workloads` kind, by the convention CRD generators
// follow (kubebuilder, controller-gen: lower case, English plural): TrainingRun → trainingruns,
// Policy → policies, Mesh → meshes. The table's kinds carry their own resource.
std::string plural_resource(std::string_view kind);

// The webhook rules (RuleWithOperations) for the kinds: one rule per API group, version and set
// of operations, in first-seen order. Built-in kinds in every version ("*": the engine matches
// them in any version); a policy workload in the version it names, the only one evaluated.
Json webhook_rules(const std::vector<AdmittedKind>& kinds);

// Pod UPDATE (SPEC §7.1; engine/pod_update.h): the validating webhook and the native
// ValidatingAdmissionPolicies get every Pod UPDATE by this rule, after the kinds' rules, and
// let through only those pod_update_condition() holds for. The mutating ones never get it: a Pod
// UPDATE is judged, never patched, and judged where the validating webhook sees it — after every
// mutating webhook, the Pod as it will be stored.
Json pod_update_rule();

// The matchCondition (admissionregistration/v1 MatchCondition, GA in 1.30, on by default since
// 1.28) that keeps a Pod UPDATE away unless it changes a member of kPodPlacementFields, a
// cdi.k8s.io/ annotation or a label of kPodKueueLabels — what engine/pod_update.h
// pod_placement_changed decides — or releases its controller, so that the other label,
// annotation, finalizer and image updates of every Pod of the cluster never wait for
// gpuadmit, nor fail when it is down (failurePolicy Fail). Every other request passes it. CEL as
// Kubernetes evaluates it over the unstructured objects (subResource absent when empty: has()).
Json pod_update_condition();

// The namespaces both webhooks skip, sorted: kAlwaysExcluded, the release namespace, the
// policy's exempt namespaces that are literal names (a pattern that is a DNS label matches only
// itself) and the target's `excluded`.
std::vector<std::string> excluded_namespaces(const CompiledPolicy& policy,
                                             const WebhookTarget& target);

Json mutating_webhook_configuration(const CompiledPolicy& policy, const WebhookTarget& target);
Json validating_webhook_configuration(const CompiledPolicy& policy, const WebhookTarget& target);

}  // namespace gpuadmit::render
