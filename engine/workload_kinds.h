#pragma once
// The one table of workload kinds gpuadmit knows (SPEC §6, docs/workloads.md): for each kind its
// API group and resource, where its pod templates are and which counts multiply their pods,
// whether the API server lets an UPDATE change those templates, how Kueue finds its queue, and
// which kinds' controllers create it. Everything that lists kinds reads it: the engine
// (engine/workload.cc), the Kueue rules (engine/kueue.cc), `render`'s webhook rules and through
// them the chart's (render/webhook_configuration.cc, charts/gpuadmit/files/webhook-rules.yaml),
// the metric labels and the generated table of docs/workloads.md. tests/engine/
// workload_kinds_test.cpp fails when any of them disagrees.
//
//   const WorkloadKind* k = find_workload_kind("apps/v1", "Deployment");
//   k->resource == "deployments"; k->pod_specs[0].spec == "spec.template.spec";

#include <string_view>
#include <vector>

namespace gpuadmit {

// How Kueue finds a kind's LocalQueue (the kueue.x-k8s.io/queue-name label), when no ancestor
// Kueue manages holds it (engine/kueue.h).
enum class KueueQueue {
  // A Kueue integration (kueue pkg/controller/jobs/<kind>): the object's own metadata.labels
  // (jobframework.QueueNameForObject).
  kOwnLabels,
  // CronJob: Kueue has no integration; the Jobs it creates carry spec.jobTemplate.metadata's
  // labels (cronjob getJobFromTemplate2) and are Kueue's (batch/job).
  kJobTemplateLabels,
  // No integration: Kueue's pod integration manages the pods it creates (they have no ancestor
  // Kueue manages), and pods carry their template's labels: each pod template's labels.
  kPodTemplateLabels,
};

// Whether an UPDATE may change the pod templates, as the API server (or the kind's own
// validating webhook) decides: where it may not, gpuadmit never patches them on UPDATE.
enum class TemplateUpdates { kMutable, kImmutable };

// A count that multiplies the pods one pod template stands for (SPEC §6 "replica counts").
enum class CountRule {
  kValue,     // the integer at `path`; absent: 1 (the API default)
  kJobSpec,   // the batch/v1 JobSpec at `path`: parallelism (absent: 1), at most completions
  kRayGroup,  // the KubeRay WorkerGroupSpec at `path`: replicas (else minReplicas) × numOfHosts
  kLwsGroup,  // LeaderWorkerSet's `path` (leaderWorkerTemplate.size): size − 1 workers a group
};

struct ReplicaCount {
  std::string_view path;  // SPEC §6 syntax; its wildcards are those of the pod template's path
  CountRule rule = CountRule::kValue;
};

struct PodTemplatePath {
  std::string_view spec;  // the PodSpec, SPEC §6 syntax: "spec.template.spec"
  std::vector<ReplicaCount> counts;
};

struct KindRef {
  std::string_view group;  // "" is the core group
  std::string_view kind;
};

struct WorkloadKind {
  std::string_view group;  // "" is the core group
  std::string_view kind;
  std::string_view resource;  // the REST resource (plural): "deployments"
  // Empty: a kind without a pod template that gpuadmit knows as a controller of workloads and
  // as a Kueue integration (TrainJob, AppWrapper, SparkApplication); admitted for its queue
  // only (queued_without_pod_specs, GPU025), never mutated.
  std::vector<PodTemplatePath> pod_specs;
  TemplateUpdates template_updates = TemplateUpdates::kMutable;
  KueueQueue kueue = KueueQueue::kPodTemplateLabels;
  // The kinds whose controllers create objects of this kind (ownerReferences with
  // controller: true); gpuadmit never mutates such an object (docs/decisions.md, "Controllers
  // converge"), whatever its controller.
  std::vector<KindRef> controllers;
  // Subresources whose UPDATE gpuadmit evaluates (the Pod's "ephemeralcontainers").
  std::vector<std::string_view> subresources;
};

// Every kind, in the table's order (the order of render's webhook rules and of docs/workloads.md).
const std::vector<WorkloadKind>& workload_kinds();

// The kind of (apiVersion, kind), matched by API group and kind in any version (the template
// paths of these kinds have not changed across their versions), or null.
const WorkloadKind* find_workload_kind(std::string_view api_version, std::string_view kind);

// True when (apiVersion, kind) is a kind of the table Kueue queues by its own labels that has no
// pod spec gpuadmit reads (TrainJob, AppWrapper, SparkApplication): admitted for its queue alone
// (GPU025, Rule::check_queued_object), its children queued through it.
bool queued_without_pod_specs(std::string_view api_version, std::string_view kind);
bool queued_without_pod_specs(const WorkloadKind& kind);

// The API group of an apiVersion: "apps/v1" → "apps", "v1" → "".
std::string_view api_group_of(std::string_view api_version);

// The table's own copy of a kind name ("Deployment"), for labels that must come from a closed
// set (webhook metrics); "" when no kind of the table has that name.
std::string_view known_kind_name(std::string_view kind);

}  // namespace gpuadmit
