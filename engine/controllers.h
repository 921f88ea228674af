#pragma once
// Objects controllers make, and UPDATEs: what gpuadmit mutates and when (docs/decisions.md,
// "Controllers converge"). A controller copies its pod template into the objects it creates and
// compares them with it (the Deployment controller's EqualIgnoreHash), so gpuadmit mutates the
// template where the user wrote it and never the copies; on UPDATE it looks only at templates
// that changed, as PodSecurity admission does for Pods.
//
//   if (auto owner = controller_reference(replica_set)) owner->kind;   // "Deployment"
//   template_treatment(replica_set, Operation::kCreate, TemplateMode::kMutate)
//       == TemplateTreatment::kJudge

#include <optional>
#include <string_view>
#include <vector>

#include "engine/context.h"
#include "engine/json.h"
#include "engine/workload.h"

namespace gpuadmit {

// An ownerReferences entry (k8s.io/apimachinery metav1.OwnerReference); views into the object.
struct OwnerReference {
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
};

// The object's controller: the first ownerReferences entry with `controller: true`
// (metav1.GetControllerOf; validation allows one), or nullopt. The one reader of ownerReferences.
std::optional<OwnerReference> controller_reference(const Json& object);

// True when `old_object` has a controller ownerReference and `object` has not that one (none,
// or another apiVersion, kind, name or uid; blockOwnerDeletion may change): released or
// orphaned. A Pod UPDATE that does it is judged (engine/admission.cc), as it may leave a
// standalone pod (engine/kueue.h child_update); an adoption (no controller before) is not.
bool controller_released(const Json& object, const Json& old_object);

// True when `object` has a controller ownerReference that `old_object` has not (gained, or
// replaced): an UPDATE that does it is judged as its sender's CREATE (GPU025), or a tenant could
// put its own queued workload under a parent of its own that Kueue already admitted.
inline bool controller_gained(const Json& object, const Json& old_object) {
  return controller_released(old_object, object);
}

// True when the object's controller is a DaemonSet (any group: OpenKruise's Advanced DaemonSet
// runs its pods on every node too).
bool controlled_by_daemonset(const Json& object);

// Node agents — the device plugin, DCGM exporter, GPU Feature Discovery — run as DaemonSets and
// need every GPU and every node: a DaemonSet, or a Pod whose controller is one, in a namespace of
// the policy's `enforcement.nodeAgents.namespaces`. GPU009, GPU024, GPU026, the strip and the
// GPU-visibility mutation leave them alone. Anyone who may create a DaemonSet or write an
// ownerReference may claim to be one; only the namespace, which the policy names, makes it so:
// elsewhere a DaemonSet and its pods are judged like any workload (docs/decisions.md, "Whom
// gpuadmit believes").
bool runs_on_every_node(const PodContext& ctx);

// The user kube-controller-manager sends its requests as when it runs without
// --use-service-account-credentials (kubeadm and managed clusters run with it: then each
// controller is its own service account, kube_controller_users()).
inline constexpr std::string_view kKubeControllerManagerUser = "system:kube-controller-manager";

// A built-in controller of kube-controller-manager: the kind whose children it creates, and the
// service account it sends its requests as with --use-service-account-credentials
// (system:serviceaccount:kube-system:<name>; the names of the bootstrap controller roles,
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go).
struct ControllerUser {
  std::string_view group;  // "" is the core group
  std::string_view kind;
  std::string_view username;
};
const std::vector<ControllerUser>& kube_controller_users();

// True when the request's sender (`username`, AdmissionRequest.userInfo.username) is the
// controller of `owner`'s kind: kube-controller-manager's for the built-in kinds
// (kube_controller_users(), or kKubeControllerManagerUser for any of them), the policy's
// `controllers` for the rest. Only then is an ownerReference believed: anyone who may create an
// object may write any ownerReferences into it. "" (lint, a review without userInfo) believes no
// owner.
bool sent_by_owner_controller(const OwnerReference& owner, std::string_view username,
                              const CompiledPolicy& policy);

// How the webhook treats workload templates (`serve --templates`, docs/install.md "GitOps").
enum class TemplateMode {
  kMutate,    // templates are mutated like Pods (the default)
  kValidate,  // templates are judged as their Pods will be admitted, never patched
};

// "mutate" / "validate" (the `--templates` flag), or nullopt.
std::optional<TemplateMode> parse_template_mode(std::string_view text);

// What an admission does with an object's pod specs.
enum class TemplateTreatment {
  kMutate,  // mutated, then judged: the patch is sent
  kJudge,   // judged as mutated (the mutations the object's Pods will get at their CREATE),
            // never patched: a controller's copy, an immutable template on UPDATE, or
            // TemplateMode::kValidate
};

// The treatment of `object` under `operation` (CREATE or UPDATE): a Pod is mutated; any other
// object with a controller is judged only, as are templates the API server does not let an
// UPDATE change (engine/workload_kinds.h TemplateUpdates) and, with TemplateMode::kValidate,
// every template.
TemplateTreatment template_treatment(const Json& object, Operation operation, TemplateMode mode);

// True when the pod template holding `location` is the same in `old_object` (an UPDATE that did
// not change it: it is not evaluated). The template is the PodTemplateSpec, the spec's parent:
// its metadata and spec.
bool template_unchanged(const Json& object, const Json& old_object,
                        const PodSpecLocation& location);

}  // namespace gpuadmit
