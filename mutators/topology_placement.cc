#include "mutators/topology_placement.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "engine/kueue.h"
#include "mutators/mutator_support.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// The label each operator puts on every pod of a job, valued with the job's name — what a
// required pod-affinity term selects the job's own pods by:
//   Kubeflow training-operator (PyTorchJob, TFJob, XGBoostJob, PaddleJob, MXJob, JAXJob, MPIJob
//   v1) and mpi-operator (MPIJob v2beta1): JobNameLabel = "training.kubeflow.org/job-name"
//   (kubeflow/common pkg/apis/common/v1 constants; mpi-operator pkg/apis/kubeflow/v2beta1);
//   JobSet: "jobset.sigs.k8s.io/jobset-name" (jobset api/jobset/v1alpha2 JobSetNameKey);
//   KubeRay: RayClusterLabelKey = "ray.io/cluster", the RayCluster's name (ray-operator
//   controllers/ray/utils/constant.go; a RayJob's cluster gets a generated name: not here);
//   Volcano: JobNameKey = "volcano.sh/job-name" (volcano pkg/apis/batch/v1alpha1 labels).
// LeaderWorkerSet is not here: its unit of placement is one group, not the whole set, and the
// pods carry no label naming their group before the controller hashes it (docs/mutations.md §11).
struct JobLabel {
  std::string_view group, kind, label;
};
constexpr JobLabel kJobLabels[] = {
    {"kubeflow.org", "PyTorchJob", "training.kubeflow.org/job-name"},
    {"kubeflow.org", "TFJob", "training.kubeflow.org/job-name"},
    {"kubeflow.org", "XGBoostJob", "training.kubeflow.org/job-name"},
    {"kubeflow.org", "PaddleJob", "training.kubeflow.org/job-name"},
    {"kubeflow.org", "MXJob", "training.kubeflow.org/job-name"},
    {"kubeflow.org", "JAXJob", "training.kubeflow.org/job-name"},
    {"kubeflow.org", "MPIJob", "training.kubeflow.org/job-name"},
    {"jobset.x-k8s.io", "JobSet", "jobset.sigs.k8s.io/jobset-name"},
    {"ray.io", "RayCluster", "ray.io/cluster"},
    {"batch.volcano.sh", "Job", "volcano.sh/job-name"},
};

// Kueue's topology-aware scheduling (https://kueue.sigs.k8s.io/docs/concepts/
// topology_aware_scheduling/): one of these on a pod template's metadata; Kueue refuses more than
// one (jobset webhook: "must not contain more than one topology annotation").
constexpr std::string_view kRequiredTopology = "kueue.x-k8s.io/podset-required-topology";
constexpr std::string_view kTopologyAnnotations[] = {
    kRequiredTopology, "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology"};

std::optional<std::string_view> job_label(const Json& object) {
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view group = api_version.substr(0, api_version.find('/'));
  const std::string_view kind = string_member(object, "kind");
  for (const JobLabel& j : kJobLabels) {
    if (j.group == group && j.kind == kind) return j.label;
  }
  return std::nullopt;
}

// The template already says where it goes: a Kueue topology annotation, or a required pod
// affinity term on the domain (the user's own placement is kept).
bool placed(const Json& metadata, const Json& spec, const std::string& domain) {
  if (const Json* annotations = present(metadata, "annotations")) {
    for (std::string_view key : kTopologyAnnotations) {
      if (find_member(*annotations, key) != nullptr) return true;
    }
  }
  const Json* affinity = present(spec, "affinity");
  const Json* pod = affinity != nullptr ? present(*affinity, "podAffinity") : nullptr;
  const Json* terms =
      pod != nullptr ? present(*pod, "requiredDuringSchedulingIgnoredDuringExecution") : nullptr;
  if (terms == nullptr || !terms->is_array()) return false;
  return std::any_of(terms->begin(), terms->end(),
                     [&](const Json& t) { return string_member(t, "topologyKey") == domain; });
}

class TopologyPlacementMutator final : public Mutator {
 public:
  std::string_view name() const override { return "topology"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.gpu_class != nullptr && ctx.gpu_class->topology &&
           !ctx.gpu_class->topology->domain_label.empty();
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const Json& object = pod.view().object();
      const std::optional<std::string_view> label = job_label(object);
      if (!label) return false;
      const std::string& domain = ctx.gpu_class->topology->domain_label;
      static const Json kNone = empty_object();
      const Json* metadata = pod.view().metadata();
      if (placed(metadata != nullptr ? *metadata : kNone, pod.view().spec(), domain)) return false;
      because(ctx, "spec.classes." + ctx.gpu_class->name + ".topology.domainLabel");
      if (ctx.tenant != nullptr && ctx.tenant->queue) {
        return pod.set_annotation(kRequiredTopology, domain);
      }
      const Json* meta = present(object, "metadata");
      const std::string_view job = meta != nullptr ? string_member(*meta, "name") : "";
      if (job.empty()) return false;  // generateName: the name the pods will carry is unknown
      Json term = empty_object();
      term["labelSelector"]["matchLabels"][std::string(*label)] = std::string(job);
      term["topologyKey"] = domain;
      Json* affinity = pod.spec(SpecMember::kAffinity).object();
      if (affinity == nullptr) return false;  // not an object: the API server's to refuse
      Json* pod_affinity = member_object(*affinity, "podAffinity");
      Json* required = pod_affinity ? member_array(*pod_affinity,
                                                   "requiredDuringSchedulingIgnoredDuringExecution")
                                    : nullptr;
      if (required == nullptr) return false;
      required->push_back(std::move(term));
      return true;
    });
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_topology_placement_mutator() {
  return std::make_unique<TopologyPlacementMutator>();
}

}  // namespace gpuadmit
