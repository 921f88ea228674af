#include "engine/kueue.h"

#include <algorithm>
#include <array>

namespace gpuadmit {
namespace {

// The kinds Kueue has an integration for (kueue pkg/controller/jobs/: job, jobset, kubeflow
// jobs, mpijob, rayjob, raycluster, pod, deployment, statefulset, leaderworkerset; the Kueue docs'
// "Run …" tasks), each reading kueue.x-k8s.io/queue-name from its own metadata.labels
// (jobframework.QueueName → QueueNameForObject). Pods, Deployments, StatefulSets and
// LeaderWorkerSets are opt-in integrations (Configuration integrations.frameworks); a label on
// them is inert until the integration is enabled.
constexpr std::array<KueueManagedKind, 15> kManaged = {{
    {"", "Pod"},
    {"batch", "Job"},
    {"jobset.x-k8s.io", "JobSet"},
    {"kubeflow.org", "PyTorchJob"},
    {"kubeflow.org", "TFJob"},
    {"kubeflow.org", "MPIJob"},
    {"kubeflow.org", "XGBoostJob"},
    {"kubeflow.org", "PaddleJob"},
    {"kubeflow.org", "JAXJob"},
    {"ray.io", "RayJob"},
    {"ray.io", "RayCluster"},
    {"apps", "Deployment"},
    {"apps", "StatefulSet"},
    {"leaderworkerset.x-k8s.io", "LeaderWorkerSet"},
    {"trainer.kubeflow.org", "TrainJob"},
}};

std::string_view group_of(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

bool is_managed(std::string_view api_version, std::string_view kind) {
  const std::string_view group = group_of(api_version);
  return std::any_of(kManaged.begin(), kManaged.end(),
                     [&](const KueueManagedKind& m) { return m.group == group && m.kind == kind; });
}

// The controller ownerReference of the object, or null.
const Json* controller_of(const Json& object) {
  const Json* metadata = find_member(object, "metadata");
  const Json* owners = metadata != nullptr ? find_member(*metadata, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_array()) return nullptr;
  for (const Json& owner : *owners) {
    const Json* controller = find_member(owner, "controller");
    if (controller != nullptr && controller->is_boolean() && controller->get<bool>()) return &owner;
  }
  return nullptr;
}

}  // namespace

std::span<const KueueManagedKind> kueue_managed_kinds() { return kManaged; }

std::optional<JsonPointer> kueue_queue_metadata(const Json& object) {
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view kind = string_member(object, "kind");
  // Kueue runs no Job of its own for a CronJob: the Jobs it creates carry the jobTemplate's
  // labels and are queued as Jobs (Kueue docs, "Run a CronJob").
  if (group_of(api_version) == "batch" && kind == "CronJob") {
    return JsonPointer("/spec/jobTemplate/metadata");
  }
  if (!is_managed(api_version, kind)) return std::nullopt;
  if (const Json* owner = controller_of(object)) {
    // A plain Pod is one without a controller (pod integration: pods of a Job, ReplicaSet or
    // any other controller are that controller's); other kinds are skipped when their owner is
    // itself a kind Kueue manages (jobframework IsOwnerManagedByKueue): the owner carries the
    // queue. A Job created by a CronJob is queued as a Job.
    if (kind == "Pod") return std::nullopt;
    if (is_managed(string_member(*owner, "apiVersion"), string_member(*owner, "kind"))) {
      return std::nullopt;
    }
  }
  return JsonPointer("/metadata");
}

std::string kueue_queue_name(const Json& object, const JsonPointer& metadata) {
  const Json* meta = object.contains(metadata) ? &object.at(metadata) : nullptr;
  if (meta == nullptr || !meta->is_object()) return "";
  for (std::string_view map : {"labels", "annotations"}) {
    const Json* entries = find_member(*meta, map);
    if (entries == nullptr || !entries->is_object()) continue;
    const std::string_view key = map == "labels" ? kQueueNameLabel : kQueueNameAnnotation;
    if (const std::string_view name = string_member(*entries, key); !name.empty()) {
      return std::string(name);
    }
  }
  return "";
}

}  // namespace gpuadmit
