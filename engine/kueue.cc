#include "engine/kueue.h"

#include "engine/controllers.h"
#include "engine/workload_kinds.h"

namespace gpuadmit {
namespace {

// A kind gpuadmit knows: a kind of the table (pod templates or not) or a policy workload.
bool known_kind(std::string_view api_version, std::string_view kind, const CompiledPolicy& policy) {
  return find_workload_kind(api_version, kind) != nullptr ||
         is_workload_kind(api_version, kind, policy);
}

// The controller of `object`, when it is a kind whose children Kueue leaves to it.
std::optional<OwnerReference> kueue_managing_controller(const Json& object) {
  const std::optional<OwnerReference> owner = controller_reference(object);
  if (!owner) return std::nullopt;
  const std::string_view group = api_group_of(owner->api_version);
  const WorkloadKind* k = find_workload_kind(owner->api_version, owner->kind);
  const bool kueue_skips = k != nullptr && (k->kueue == KueueQueue::kOwnLabels ||
                                            (group == "apps" && owner->kind == "ReplicaSet"));
  return kueue_skips ? owner : std::nullopt;
}

bool suspended(const Json* spec) {
  const Json* suspend =
      spec != nullptr && spec->is_object() ? find_member(*spec, "suspend") : nullptr;
  return suspend != nullptr && suspend->is_boolean() && suspend->get<bool>();
}

// A child's spec changed in anything but being suspended: Kueue suspends a child Job whose
// ancestor's workload is not admitted (jobframework reconciler, shouldSuspendChildJob), and a
// suspended child runs nothing. Unsuspending it, or any other change, counts.
bool spec_grows(const Json* spec, const Json* old_spec) {
  if (spec == nullptr || old_spec == nullptr || !spec->is_object() || !old_spec->is_object()) {
    return spec == nullptr || old_spec == nullptr ? spec != old_spec : *spec != *old_spec;
  }
  // Every member of `a` but suspend is in `b`, equal.
  auto others_within = [](const Json& a, const Json& b) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (it.key() == "suspend") continue;
      const Json* other = find_member(b, it.key());
      if (other == nullptr || *other != it.value()) return false;
    }
    return true;
  };
  return !others_within(*spec, *old_spec) || !others_within(*old_spec, *spec) ||
         (!suspended(spec) && suspended(old_spec));
}

}  // namespace

std::optional<QueueSite> kueue_queue_site(const Json& object, const PodSpecLocation& location,
                                          const CompiledPolicy& policy, std::string_view sender) {
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view kind = string_member(object, "kind");
  if (const std::optional<OwnerReference> owner = controller_reference(object)) {
    // Exemption kueue-owner (docs/security.md): the owner is believed from its controller only.
    if (known_kind(owner->api_version, owner->kind, policy) &&
        sent_by_owner_controller(*owner, sender, policy)) {
      return std::nullopt;
    }
  }
  // A policy `workloads` kind (which wins over the table for its apiVersion) has no Kueue
  // integration: its pods are the pod integration's.
  bool policy_kind = false;
  for (const WorkloadDecl& w : policy.policy().workloads) {
    policy_kind = policy_kind || (w.api_version == api_version && w.kind == kind);
  }
  const WorkloadKind* k = policy_kind ? nullptr : find_workload_kind(api_version, kind);
  if (k == nullptr && !policy_kind) return std::nullopt;
  const KueueQueue queue = k != nullptr ? k->kueue : KueueQueue::kPodTemplateLabels;
  switch (queue) {
    case KueueQueue::kOwnLabels:
      return QueueSite{JsonPointer("/metadata"), false};
    case KueueQueue::kJobTemplateLabels:
      return QueueSite{JsonPointer("/spec/jobTemplate/metadata"), false};
    case KueueQueue::kPodTemplateLabels:
      return QueueSite{location.metadata, true};
  }
  return std::nullopt;
}

std::optional<OwnerReference> kueue_unbelieved_owner(const Json& object,
                                                     const CompiledPolicy& policy,
                                                     std::string_view sender) {
  if (sender.empty()) return std::nullopt;
  const std::optional<OwnerReference> owner = kueue_managing_controller(object);
  if (!owner || sent_by_owner_controller(*owner, sender, policy)) return std::nullopt;
  return owner;
}

std::optional<ChildUpdate> child_update(const Json& object, const Json& old_object,
                                        const CompiledPolicy& policy, std::string_view sender) {
  if (sender.empty()) return std::nullopt;
  const std::optional<OwnerReference> owner = kueue_managing_controller(old_object);
  if (!owner) return std::nullopt;
  ChildUpdate update{*owner};
  update.detached = controller_released(object, old_object);
  update.by_other = !sent_by_owner_controller(*owner, sender, policy);
  const bool pod = string_member(object, "kind") == "Pod" &&
                   api_group_of(string_member(object, "apiVersion")).empty();
  update.spec_changed = update.by_other && !pod &&
                        spec_grows(find_member(object, "spec"), find_member(old_object, "spec"));
  return update;
}

const std::vector<KueueManagedKind>& kueue_managed_kinds() {
  static const std::vector<KueueManagedKind> managed = [] {
    std::vector<KueueManagedKind> kinds;
    for (const WorkloadKind& k : workload_kinds()) {
      if (k.kueue == KueueQueue::kOwnLabels) kinds.push_back({k.group, k.kind});
    }
    return kinds;
  }();
  return managed;
}

std::string kueue_label(const Json& object, const JsonPointer& metadata, std::string_view key) {
  const Json* meta = find_pointer(object, metadata);
  if (meta == nullptr || !meta->is_object()) return "";
  const Json* labels = find_member(*meta, "labels");
  if (labels == nullptr || !labels->is_object()) return "";
  return std::string(string_member(*labels, key));
}

std::string kueue_queue_name(const Json& object, const JsonPointer& metadata) {
  return kueue_label(object, metadata, kQueueNameLabel);
}

// Exemption kueue-gate (docs/security.md): believed from Kueue's identity only.
bool sent_by_kueue(std::string_view username, const CompiledPolicy& policy) {
  return !username.empty() && (username == kKueueControllerUser ||
                               policy.names_controller(username, "kueue.x-k8s.io", "Workload"));
}

bool kueue_gate_removed(const Json& object, const Json& old_object) {
  auto gated = [](const Json& pod) {
    const Json* spec = find_member(pod, "spec");
    const Json* gates = spec != nullptr ? find_member(*spec, "schedulingGates") : nullptr;
    if (gates == nullptr || !gates->is_array()) return false;
    for (const Json& g : *gates) {
      if (string_member(g, "name") == kKueueAdmissionGate) return true;
    }
    return false;
  };
  return gated(old_object) && !gated(object);
}

}  // namespace gpuadmit
