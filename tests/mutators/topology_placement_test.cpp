#include "mutators/topology_placement.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace topology_placement_test {
namespace {

// The fleet policy with the a100 class's NVLink domain named (`topology.domainLabel`: GPU
// Feature Discovery's `nvidia.com/gpu.clique` on NVLink-switched systems), and tenant web queued
// through Kueue.
std::string topology_policy() {
  std::string yaml = fleet_policy();
  const std::string a100 = "        profiles: [1g.10gb, 3g.40gb, 1g.10gb+me]\n";
  yaml.replace(yaml.find(a100), a100.size(),
               a100 + "      topology: {domainLabel: nvidia.com/gpu.clique}\n");
  const std::string web = "        default: gpu-inference\n";
  yaml.replace(yaml.find(web), web.size(), web + "      queue: {name: team-web}\n");
  return yaml;
}

constexpr std::string_view kGpu = R"({"name":"t","resources":{"limits":{"nvidia.com/gpu":8}}})";
constexpr std::string_view kCpu = R"({"name":"c"})";

// A PyTorchJob of one master and one worker replica spec, `meta` the pod templates' metadata
// members and `spec` their pod spec's members after the containers.
std::string pytorchjob(std::string_view name, std::string_view meta = "",
                       std::string_view spec = "", std::string_view container = kGpu) {
  const std::string tpl = R"({"metadata":{)" + std::string(meta) + R"(},"spec":{"containers":[)" +
                          std::string(container) + "]" +
                          (spec.empty() ? "" : "," + std::string(spec)) + "}}";
  return R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":")" +
         std::string(name) +
         R"("},"spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":)" + tpl +
         R"(},"Worker":{"replicas":3,"template":)" + tpl + "}}}}";
}

std::string affinity(std::string_view label, std::string_view job) {
  return R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)"
         R"({"labelSelector":{"matchLabels":{")" +
         std::string(label) + R"(":")" + std::string(job) +
         R"("}},"topologyKey":"nvidia.com/gpu.clique"}]}})";
}

std::string one_template(std::string_view api_version, std::string_view kind,
                         std::string_view path_open, std::string_view path_close,
                         std::string_view spec = "") {
  return R"({"apiVersion":")" + std::string(api_version) + R"(","kind":")" + std::string(kind) +
         R"(","metadata":{"name":"run"},"spec":)" + std::string(path_open) +
         R"({"metadata":{},"spec":{"containers":[)" + std::string(kGpu) + "]" +
         (spec.empty() ? "" : "," + std::string(spec)) + "}}" + std::string(path_close) + "}";
}

TEST_CASE("mutator topology: a distributed job's pods in one domain of their class",
          "[mutators][topology]") {
  auto policy = policy_from_yaml(topology_policy());
  auto mutator = make_topology_placement_mutator();
  CHECK(mutator->name() == "topology");
  const std::string kubeflow = "training.kubeflow.org/job-name";
  run_mutation_cases(
      *mutator, policy,
      {
          // Without Kueue: required pod affinity on the operator's job label, so every pod of
          // the job goes where the first went (the scheduler lets the first pod, which matches
          // its own term, go anywhere: pkg/scheduler/framework/plugins/interpodaffinity).
          {"a PyTorchJob of the a100 class: every replica's pods, by the job's name", "ml-a",
           pytorchjob("train"), pytorchjob("train", "", affinity(kubeflow, "train"))},
          {"a term on the domain the user wrote is kept", "ml-a",
           pytorchjob("train", "", affinity(kubeflow, "other")), ""},
          {"Kueue's own topology annotation is kept", "ml-a",
           pytorchjob("train",
                      R"("annotations":{"kueue.x-k8s.io/podset-preferred-topology":"rack"})"),
           ""},
          {"a class without a domain (h100)", "ml-a",
           pytorchjob("train", R"("annotations":{"gpuadmit.io/class":"h100"})"), ""},
          {"CPU replicas are left alone", "ml-a", pytorchjob("train", "", "", kCpu), ""},
          {"a name the API server will generate: the pods' label value is unknown", "ml-a",
           R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"generateName":"t-"},
               "spec":{"pytorchReplicaSpecs":{"Worker":{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}}}}",
           ""},
          {"a JobSet: by jobset-name", "ml-a",
           one_template("jobset.x-k8s.io/v1alpha2", "JobSet",
                        R"({"replicatedJobs":[{"name":"w","template":{"spec":{"template":)",
                        "}}}]}"),
           one_template("jobset.x-k8s.io/v1alpha2", "JobSet",
                        R"({"replicatedJobs":[{"name":"w","template":{"spec":{"template":)",
                        "}}}]}", affinity("jobset.sigs.k8s.io/jobset-name", "run"))},
          {"a RayCluster: by ray.io/cluster", "ml-a",
           one_template("ray.io/v1", "RayCluster",
                        R"({"workerGroupSpecs":[{"groupName":"g","template":)", "}]}"),
           one_template("ray.io/v1", "RayCluster",
                        R"({"workerGroupSpecs":[{"groupName":"g","template":)", "}]}",
                        affinity("ray.io/cluster", "run"))},
          {"a Volcano Job: by volcano.sh/job-name", "ml-a",
           one_template("batch.volcano.sh/v1alpha1", "Job",
                        R"({"tasks":[{"name":"w","replicas":2,"template":)", "}]}"),
           one_template("batch.volcano.sh/v1alpha1", "Job",
                        R"({"tasks":[{"name":"w","replicas":2,"template":)", "}]}",
                        affinity("volcano.sh/job-name", "run"))},
          {"a Deployment is not a distributed job", "ml-a",
           one_template("apps/v1", "Deployment", R"({"template":)", "}"), ""},
          {"a LeaderWorkerSet: placed by group, not here", "ml-a",
           one_template("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet",
                        R"({"leaderWorkerTemplate":{"workerTemplate":)", "}}"),
           ""},
      });
}

TEST_CASE("mutator topology: a tenant that uses Kueue gets Kueue's topology annotation",
          "[mutators][topology]") {
  auto policy = policy_from_yaml(topology_policy());
  auto mutator = make_topology_placement_mutator();
  // Kueue's topology-aware scheduling admits the whole PodSet into one domain of the level
  // named, on each pod template (https://kueue.sigs.k8s.io/docs/concepts/
  // topology_aware_scheduling/).
  const std::string on_a100 = R"("annotations":{"gpuadmit.io/class":"a100")";
  run_mutation_cases(
      *mutator, policy,
      {
          {"each replica's template, not the job's metadata", "web-a",
           pytorchjob("serve", on_a100 + "}"),
           pytorchjob(
               "serve",
               on_a100 + R"(,"kueue.x-k8s.io/podset-required-topology":"nvidia.com/gpu.clique"})")},
          {"a required topology already named is kept", "web-a",
           pytorchjob("serve", on_a100 + R"(,"kueue.x-k8s.io/podset-required-topology":"rack"})"),
           ""},
      });
}

}  // namespace
}  // namespace topology_placement_test
}  // namespace gpuadmit::testing
