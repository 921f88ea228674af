#include "engine/controllers.h"

#include <exception>

#include "engine/workload_kinds.h"

namespace gpuadmit {

std::optional<OwnerReference> controller_reference(const Json& object) {
  const Json* metadata = find_member(object, "metadata");
  const Json* owners = metadata != nullptr ? find_member(*metadata, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_array()) return std::nullopt;
  for (const Json& owner : *owners) {
    const Json* controller = find_member(owner, "controller");
    if (controller == nullptr || !controller->is_boolean() || !controller->get<bool>()) continue;
    return OwnerReference{string_member(owner, "apiVersion"), string_member(owner, "kind"),
                          string_member(owner, "name"), string_member(owner, "uid")};
  }
  return std::nullopt;
}

bool controller_released(const Json& object, const Json& old_object) {
  const std::optional<OwnerReference> before = controller_reference(old_object);
  if (!before) return false;
  const std::optional<OwnerReference> now = controller_reference(object);
  return !now || now->api_version != before->api_version || now->kind != before->kind ||
         now->name != before->name || now->uid != before->uid;
}

bool controlled_by_daemonset(const Json& object) {
  const std::optional<OwnerReference> owner = controller_reference(object);
  return owner && owner->kind == "DaemonSet";
}

// Exemption node-agents (docs/security.md): DaemonSets in the policy's nodeAgents namespaces.
bool runs_on_every_node(const PodContext& ctx) {
  const RequestContext* request = ctx.request;
  return request != nullptr && ctx.policy != nullptr &&
         (request->daemonset_owned || request->kind == "DaemonSet") &&
         ctx.policy->is_node_agent_namespace(request->ns);
}

const std::vector<ControllerUser>& kube_controller_users() {
  // The controllers that create Pods (and the Deployment's ReplicaSets, the CronJob's Jobs):
  // cmd/kube-controller-manager names them, and the bootstrap policy binds the role
  // system:controller:<name> to the service account kube-system/<name>.
  static const std::vector<ControllerUser> users = {
      {"", "ReplicationController", "system:serviceaccount:kube-system:replication-controller"},
      {"apps", "ReplicaSet", "system:serviceaccount:kube-system:replicaset-controller"},
      {"apps", "Deployment", "system:serviceaccount:kube-system:deployment-controller"},
      {"apps", "StatefulSet", "system:serviceaccount:kube-system:statefulset-controller"},
      {"apps", "DaemonSet", "system:serviceaccount:kube-system:daemon-set-controller"},
      {"batch", "Job", "system:serviceaccount:kube-system:job-controller"},
      {"batch", "CronJob", "system:serviceaccount:kube-system:cronjob-controller"},
  };
  return users;
}

bool sent_by_owner_controller(const OwnerReference& owner, std::string_view username,
                              const CompiledPolicy& policy) {
  if (username.empty()) return false;
  const std::string_view group = api_group_of(owner.api_version);
  for (const ControllerUser& c : kube_controller_users()) {
    if (c.group == group && c.kind == owner.kind) {
      if (username == c.username || username == kKubeControllerManagerUser) return true;
      break;
    }
  }
  return policy.names_controller(username, group, owner.kind);
}

std::optional<TemplateMode> parse_template_mode(std::string_view text) {
  if (text == "mutate") return TemplateMode::kMutate;
  if (text == "validate") return TemplateMode::kValidate;
  return std::nullopt;
}

// Exemption judged-templates (docs/security.md): judged, never patched; never admits more.
TemplateTreatment template_treatment(const Json& object, Operation operation, TemplateMode mode) {
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view kind = string_member(object, "kind");
  if (kind == "Pod" && api_group_of(api_version).empty()) return TemplateTreatment::kMutate;
  // The copy a controller made of its own template: the controller compares it with its
  // template (Deployment: FindNewReplicaSet / EqualIgnoreHash), or reconciles it back to it
  // (operators); its Pods are mutated when they are created.
  if (controller_reference(object)) return TemplateTreatment::kJudge;
  if (mode == TemplateMode::kValidate) return TemplateTreatment::kJudge;
  if (operation == Operation::kUpdate) {
    const WorkloadKind* k = find_workload_kind(api_version, kind);
    if (k != nullptr && k->template_updates == TemplateUpdates::kImmutable) {
      return TemplateTreatment::kJudge;
    }
  }
  return TemplateTreatment::kMutate;
}

bool template_unchanged(const Json& object, const Json& old_object,
                        const PodSpecLocation& location) {
  const JsonPointer at = location.spec.parent_pointer();
  // JsonPointer lookups on a pointer find_pod_specs made from this object's own keys; the old
  // object may lack them (or hold another type there): then it changed.
  try {
    if (!old_object.contains(at)) return false;
    return old_object.at(at) == object.at(at);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace gpuadmit
