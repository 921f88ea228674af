#include "engine/workload_kinds.h"

#include <algorithm>

namespace gpuadmit {
namespace {

constexpr std::string_view kApps = "apps";
constexpr std::string_view kBatch = "batch";
constexpr std::string_view kKubeflow = "kubeflow.org";
constexpr std::string_view kRay = "ray.io";

using enum CountRule;
using enum KueueQueue;
using enum TemplateUpdates;

// One Kubeflow training-operator job (kubeflow.org/v1 <X>Job, spec.<x>ReplicaSpecs: a map of
// role → ReplicaSpec{replicas, template}); Kueue integrates all but MXJob
// (kueue pkg/controller/jobs/kubeflow/jobs: jaxjob, paddlejob, pytorchjob, tfjob, xgboostjob;
// mpijob for mpi-operator's MPIJob v2beta1).
WorkloadKind kubeflow_job(std::string_view kind, std::string_view resource,
                          std::string_view spec_path, std::string_view count_path,
                          KueueQueue kueue) {
  return {kKubeflow, kind,  resource, {{spec_path, {{count_path, kValue}}}},
          kMutable,  kueue, {},       {}};
}

// long: data, not logic: the table of workload kinds, one entry per kind.
std::vector<WorkloadKind> make_table() {
  std::vector<WorkloadKind> t;
  // core/v1 Pod: the leaf every controller creates; its ephemeral containers are added through
  // the pods/ephemeralcontainers subresource (`kubectl debug`).
  t.push_back({"",
               "Pod",
               "pods",
               {{"spec", {}}},
               kImmutable,  // a Pod's UPDATE is never evaluated (SPEC §7.1)
               kOwnLabels,
               {{"", "ReplicationController"},
                {kApps, "ReplicaSet"},
                {kApps, "StatefulSet"},
                {kApps, "DaemonSet"},
                {kBatch, "Job"},
                {kRay, "RayCluster"},
                {kKubeflow, "TFJob"},
                {kKubeflow, "PyTorchJob"},
                {kKubeflow, "MPIJob"},
                {kKubeflow, "XGBoostJob"},
                {kKubeflow, "PaddleJob"},
                {kKubeflow, "MXJob"},
                {kKubeflow, "JAXJob"},
                {"batch.volcano.sh", "Job"}},
               {"ephemeralcontainers"}});
  t.push_back({"",
               "ReplicationController",
               "replicationcontrollers",
               {{"spec.template.spec", {{"spec.replicas", kValue}}}},
               kMutable,
               kPodTemplateLabels,
               {},
               {}});
  t.push_back({kApps,
               "Deployment",
               "deployments",
               {{"spec.template.spec", {{"spec.replicas", kValue}}}},
               kMutable,
               kOwnLabels,
               {},
               {}});
  // The Deployment controller's ReplicaSets (pkg/controller/deployment/sync.go getNewReplicaSet).
  t.push_back({kApps,
               "ReplicaSet",
               "replicasets",
               {{"spec.template.spec", {{"spec.replicas", kValue}}}},
               kMutable,
               kPodTemplateLabels,
               {{kApps, "Deployment"}},
               {}});
  // LeaderWorkerSet's leader StatefulSet (owned by the LeaderWorkerSet) and each group's worker
  // StatefulSet (owned by the group's leader Pod).
  t.push_back({kApps,
               "StatefulSet",
               "statefulsets",
               {{"spec.template.spec", {{"spec.replicas", kValue}}}},
               kMutable,
               kOwnLabels,
               {{"leaderworkerset.x-k8s.io", "LeaderWorkerSet"}, {"", "Pod"}},
               {}});
  t.push_back({kApps,
               "DaemonSet",
               "daemonsets",
               {{"spec.template.spec", {}}},
               kMutable,
               kPodTemplateLabels,
               {},
               {}});
  // batch/v1 Job: spec.template is immutable but for a suspended Job's scheduling directives
  // (pkg/apis/batch/validation validatePodTemplateUpdate). Created by CronJobs
  // (pkg/controller/cronjob getJobFromTemplate2), JobSets (jobset constructJob), MPIJob v2's
  // launcher and RayJob's submitter.
  t.push_back({kBatch,
               "Job",
               "jobs",
               {{"spec.template.spec", {{"spec", kJobSpec}}}},
               kImmutable,
               kOwnLabels,
               {{kBatch, "CronJob"},
                {"jobset.x-k8s.io", "JobSet"},
                {kKubeflow, "MPIJob"},
                {kRay, "RayJob"}},
               {}});
  t.push_back({kBatch,
               "CronJob",
               "cronjobs",
               {{"spec.jobTemplate.spec.template.spec", {{"spec.jobTemplate.spec", kJobSpec}}}},
               kMutable,
               kJobTemplateLabels,
               {},
               {}});
  // JobSet: spec.replicatedJobs is immutable (jobset pkg/webhooks ValidateUpdate; a suspended
  // JobSet's scheduling directives excepted). Kubeflow Trainer's TrainJob creates one.
  t.push_back({"jobset.x-k8s.io",
               "JobSet",
               "jobsets",
               {{"spec.replicatedJobs[*].template.spec.template.spec",
                 {{"spec.replicatedJobs[*].replicas", kValue},
                  {"spec.replicatedJobs[*].template.spec", kJobSpec}}}},
               kImmutable,
               kOwnLabels,
               {{"trainer.kubeflow.org", "TrainJob"}},
               {}});
  t.push_back(
      {kRay,
       "RayCluster",
       "rayclusters",
       {{"spec.headGroupSpec.template.spec", {}},
        {"spec.workerGroupSpecs[*].template.spec", {{"spec.workerGroupSpecs[*]", kRayGroup}}}},
       kMutable,
       kOwnLabels,
       {{kRay, "RayJob"}, {kRay, "RayService"}},
       {}});
  t.push_back({kRay,
               "RayJob",
               "rayjobs",
               {{"spec.rayClusterSpec.headGroupSpec.template.spec", {}},
                {"spec.rayClusterSpec.workerGroupSpecs[*].template.spec",
                 {{"spec.rayClusterSpec.workerGroupSpecs[*]", kRayGroup}}}},
               kMutable,
               kOwnLabels,
               {},
               {}});
  // RayService is not in SPEC §6's list: it carries the same RayCluster spec under
  // rayClusterConfig (docs/decisions.md).
  t.push_back({kRay,
               "RayService",
               "rayservices",
               {{"spec.rayClusterConfig.headGroupSpec.template.spec", {}},
                {"spec.rayClusterConfig.workerGroupSpecs[*].template.spec",
                 {{"spec.rayClusterConfig.workerGroupSpecs[*]", kRayGroup}}}},
               kMutable,
               kOwnLabels,
               {},
               {}});
  // Volcano's admission webhook refuses UPDATEs that change a task's template
  // (volcano pkg/webhooks/admission/jobs/validate validateJobUpdate).
  t.push_back({"batch.volcano.sh",
               "Job",
               "jobs",
               {{"spec.tasks[*].template.spec", {{"spec.tasks[*].replicas", kValue}}}},
               kImmutable,
               kPodTemplateLabels,
               {},
               {}});
  t.push_back({"leaderworkerset.x-k8s.io",
               "LeaderWorkerSet",
               "leaderworkersets",
               {{"spec.leaderWorkerTemplate.leaderTemplate.spec", {{"spec.replicas", kValue}}},
                {"spec.leaderWorkerTemplate.workerTemplate.spec",
                 {{"spec.replicas", kValue}, {"spec.leaderWorkerTemplate.size", kLwsGroup}}}},
               kMutable,
               kOwnLabels,
               {},
               {}});
  t.push_back(kubeflow_job("TFJob", "tfjobs", "spec.tfReplicaSpecs.*.template.spec",
                           "spec.tfReplicaSpecs.*.replicas", kOwnLabels));
  t.push_back(kubeflow_job("PyTorchJob", "pytorchjobs", "spec.pytorchReplicaSpecs.*.template.spec",
                           "spec.pytorchReplicaSpecs.*.replicas", kOwnLabels));
  WorkloadKind mpi = kubeflow_job("MPIJob", "mpijobs", "spec.mpiReplicaSpecs.*.template.spec",
                                  "spec.mpiReplicaSpecs.*.replicas", kOwnLabels);
  mpi.pod_specs.push_back({"spec.template.spec", {{"spec.replicas", kValue}}});  // v1alpha1
  t.push_back(std::move(mpi));
  t.push_back(kubeflow_job("XGBoostJob", "xgboostjobs", "spec.xgbReplicaSpecs.*.template.spec",
                           "spec.xgbReplicaSpecs.*.replicas", kOwnLabels));
  t.push_back(kubeflow_job("PaddleJob", "paddlejobs", "spec.paddleReplicaSpecs.*.template.spec",
                           "spec.paddleReplicaSpecs.*.replicas", kOwnLabels));
  t.push_back(kubeflow_job("MXJob", "mxjobs", "spec.mxReplicaSpecs.*.template.spec",
                           "spec.mxReplicaSpecs.*.replicas", kPodTemplateLabels));
  t.push_back(kubeflow_job("JAXJob", "jaxjobs", "spec.jaxReplicaSpecs.*.template.spec",
                           "spec.jaxReplicaSpecs.*.replicas", kOwnLabels));
  // Kueue integrations without a pod template of their own: known as controllers (their
  // children are queued through them), admitted for their queue alone (GPU025: the children are
  // believed queued through them, so they must name one). A TrainJob's pods come from a
  // (Cluster)TrainingRuntime through the JobSet it creates; an AppWrapper wraps other objects;
  // a SparkApplication describes its driver and executors in its own terms.
  t.push_back({"trainer.kubeflow.org", "TrainJob", "trainjobs", {}, kMutable, kOwnLabels, {}, {}});
  t.push_back(
      {"workload.codeflare.dev", "AppWrapper", "appwrappers", {}, kMutable, kOwnLabels, {}, {}});
  t.push_back({"sparkoperator.k8s.io",
               "SparkApplication",
               "sparkapplications",
               {},
               kMutable,
               kOwnLabels,
               {},
               {}});
  return t;
}

}  // namespace

const std::vector<WorkloadKind>& workload_kinds() {
  static const std::vector<WorkloadKind> table = make_table();
  return table;
}

bool queued_without_pod_specs(const WorkloadKind& kind) {
  return kind.pod_specs.empty() && kind.kueue == KueueQueue::kOwnLabels;
}

bool queued_without_pod_specs(std::string_view api_version, std::string_view kind) {
  const WorkloadKind* k = find_workload_kind(api_version, kind);
  return k != nullptr && queued_without_pod_specs(*k);
}

std::string_view api_group_of(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

const WorkloadKind* find_workload_kind(std::string_view api_version, std::string_view kind) {
  const std::string_view group = api_group_of(api_version);
  for (const WorkloadKind& k : workload_kinds()) {
    if (k.kind == kind && k.group == group) return &k;
  }
  return nullptr;
}

std::string_view known_kind_name(std::string_view kind) {
  const auto& table = workload_kinds();
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const WorkloadKind& k) { return k.kind == kind; });
  return it == table.end() ? std::string_view{} : it->kind;
}

}  // namespace gpuadmit
