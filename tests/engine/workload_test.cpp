// Workload discovery (SPEC §6) on real manifests from ../shared/corpus/workloads.

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "engine/workload.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit {
namespace workload_test {
namespace {

PolicyPtr empty_policy() {
  Policy p;
  p.name = "test";
  WorkloadDecl run;
  run.api_version = "example.com/v1";
  run.kind = "TrainingRun";
  run.pod_specs = {"spec.workers[*].template.spec", "spec.launcher.template.spec"};
  p.workloads.push_back(run);
  return CompiledPolicy::compile(std::move(p));
}

// (dotted pod-spec path, replicas) of every workload document of a corpus file, in order.
std::vector<std::pair<std::string, int64_t>> specs_of(const std::string& file) {
  static const PolicyPtr policy = empty_policy();
  std::vector<std::pair<std::string, int64_t>> out;
  for (const Json& doc : testing::yaml_file_documents(std::string(GPUADMIT_SHARED_DIR) +
                                                      "/corpus/workloads/" + file)) {
    for (const PodSpecLocation& loc : find_pod_specs(doc, *policy)) {
      out.emplace_back(loc.path, loc.replicas);
    }
  }
  return out;
}

using Specs = std::vector<std::pair<std::string, int64_t>>;

TEST_CASE("workload: pod-spec paths and replicas of real manifests") {
  struct Case {
    std::string file;
    Specs expected;
  };
  const std::vector<Case> cases = {
      {"gpu-operator__gpu-pod.yaml", {{"spec", 1}}},
      {"k8s-examples__guestbook-all-in-one.yaml",
       {{"spec.template.spec", 1}, {"spec.template.spec", 2}, {"spec.template.spec", 3}}},
      {"kueue__sample-cronjob.yaml", {{"spec.jobTemplate.spec.template.spec", 3}}},
      {"training-operator__pytorch_job_mnist_nccl.yaml",
       {{"spec.pytorchReplicaSpecs.Master.template.spec", 1},
        {"spec.pytorchReplicaSpecs.Worker.template.spec", 1}}},
      {"kueue__sample-leaderworkerset-tas.yaml",
       {{"spec.leaderWorkerTemplate.leaderTemplate.spec", 2},
        {"spec.leaderWorkerTemplate.workerTemplate.spec", 4}}},
      {"volcano__mindspore-gpu.yaml",
       {{"spec.tasks[0].template.spec", 1}, {"spec.tasks[1].template.spec", 2}}},
      {"kueue__sample-jobset.yaml",
       {{"spec.replicatedJobs[0].template.spec.template.spec", 1},
        {"spec.replicatedJobs[1].template.spec.template.spec", 1}}},
      {"kuberay__ray-cluster.verl.yaml", {{"spec.headGroupSpec.template.spec", 1}}},
      {"kuberay__ray-job.resources.yaml",
       {{"spec.rayClusterSpec.headGroupSpec.template.spec", 1},
        {"spec.rayClusterSpec.workerGroupSpecs[0].template.spec", 1}}},
      {"gatekeeper-library__disallowed_all.yaml", {{"spec", 1}}},
      // One real manifest per remaining SPEC §6 kind (no ReplicaSet or PaddleJob in the corpus:
      // the API fixtures cover ReplicaSet in tests/cli/review_test.cpp).
      {"k8s-examples__deployment.yaml", {{"spec.template.spec", 1}}},
      {"k8s-examples__cassandra-statefulset.yaml", {{"spec.template.spec", 3}}},
      {"k8s-device-plugin__nvidia-device-plugin.yml", {{"spec.template.spec", 1}}},
      {"k8s-examples__guestbook-controller.yaml", {{"spec.template.spec", 3}}},
      {"k8s-device-plugin__job-1.yaml", {{"spec.template.spec", 1}}},
      {"kueue__sample-job.yaml", {{"spec.template.spec", 3}}},
      {"training-operator__multi_worker_tfjob.yaml",
       {{"spec.tfReplicaSpecs.Worker.template.spec", 2}}},
      {"mpi-operator__tensorflow-benchmarks.yaml",
       {{"spec.mpiReplicaSpecs.Launcher.template.spec", 1},
        {"spec.mpiReplicaSpecs.Worker.template.spec", 2}}},
      {"training-operator__xgboostjob.yaml",
       {{"spec.xgbReplicaSpecs.Master.template.spec", 1},
        {"spec.xgbReplicaSpecs.Worker.template.spec", 2}}},
      {"kuberay__ray-cluster.kai-gpu-sharing.yaml",
       {{"spec.headGroupSpec.template.spec", 1}, {"spec.workerGroupSpecs[0].template.spec", 2}}},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    CHECK(specs_of(c.file) == c.expected);
  }
}

TEST_CASE("workload: policy-declared kinds with * and [*] paths") {
  const PolicyPtr policy = empty_policy();
  const Json run = Json::parse(R"({"apiVersion":"example.com/v1","kind":"TrainingRun",
    "spec":{"workers":[{"replicas":4,"template":{"spec":{"containers":[]}}},
                       {"template":{"spec":{}}}],
            "launcher":{"template":{"spec":{}}}}})");
  Specs got;
  for (const PodSpecLocation& loc : find_pod_specs(run, *policy))
    got.emplace_back(loc.path, loc.replicas);
  CHECK(got == Specs{{"spec.workers[0].template.spec", 4},
                     {"spec.workers[1].template.spec", 1},
                     {"spec.launcher.template.spec", 1}});
  // Other versions of a declared kind are not matched: the declaration names one apiVersion.
  Json other = run;
  other["apiVersion"] = "example.com/v2";
  CHECK(find_pod_specs(other, *policy).empty());

  const Json map_roles = Json::parse(R"({"spec":{"roles":{"a":{"spec":{}},"b":{"spec":{}}}}})");
  std::vector<std::string> paths;
  for (const JsonPointer& p : expand_path_pattern(map_roles, "spec.roles.*.spec"))
    paths.push_back(p.to_string());
  CHECK(paths == std::vector<std::string>{"/spec/roles/a/spec", "/spec/roles/b/spec"});
}

TEST_CASE(
    "workload: Job pods are the smaller of parallelism and completions, Ray groups times "
    "numOfHosts") {
  const PolicyPtr policy = empty_policy();
  struct Case {
    std::string object;
    Specs expected;
  };
  const std::vector<Case> cases = {
      // batch/v1 JobSpec.Parallelism: fewer run when completions left < parallelism.
      {R"({"apiVersion":"batch/v1","kind":"Job","spec":{"parallelism":5,"completions":3,
          "template":{"spec":{}}}})",
       {{"spec.template.spec", 3}}},
      {R"({"apiVersion":"batch/v1","kind":"Job","spec":{"parallelism":2,"completions":8,
          "template":{"spec":{}}}})",
       {{"spec.template.spec", 2}}},
      // completions alone: parallelism defaults to 1.
      {R"({"apiVersion":"batch/v1","kind":"Job","spec":{"completions":8,"template":{"spec":{}}}})",
       {{"spec.template.spec", 1}}},
      {R"({"apiVersion":"batch/v1","kind":"CronJob","spec":{"jobTemplate":{"spec":{
          "parallelism":4,"completions":2,"template":{"spec":{}}}}}})",
       {{"spec.jobTemplate.spec.template.spec", 2}}},
      // JobSet: replicatedJobs[i].replicas × the Job's min(parallelism, completions).
      {R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","spec":{"replicatedJobs":[
          {"replicas":3,"template":{"spec":{"parallelism":4,"completions":4,
           "template":{"spec":{}}}}}]}})",
       {{"spec.replicatedJobs[0].template.spec.template.spec", 12}}},
      // KubeRay WorkerGroupSpec.NumOfHosts: each replica is a group of that many pods.
      {R"({"apiVersion":"ray.io/v1","kind":"RayCluster","spec":{"headGroupSpec":{"template":{
          "spec":{}}},"workerGroupSpecs":[{"replicas":2,"numOfHosts":4,"template":{"spec":{}}},
          {"replicas":3,"template":{"spec":{}}}]}})",
       {{"spec.headGroupSpec.template.spec", 1},
        {"spec.workerGroupSpecs[0].template.spec", 8},
        {"spec.workerGroupSpecs[1].template.spec", 3}}},
  };
  for (const Case& c : cases) {
    INFO(c.object);
    Specs got;
    for (const PodSpecLocation& loc : find_pod_specs(Json::parse(c.object), *policy)) {
      got.emplace_back(loc.path, loc.replicas);
    }
    CHECK(got == c.expected);
  }
}

TEST_CASE("workload: built-in kinds are matched by group and kind, not version") {
  const PolicyPtr policy = empty_policy();
  CHECK(is_workload_kind("apps/v1", "Deployment", *policy));
  CHECK(is_workload_kind("apps/v1beta2", "StatefulSet", *policy));
  CHECK(is_workload_kind("batch/v1", "CronJob", *policy));
  CHECK(is_workload_kind("kubeflow.org/v1", "XGBoostJob", *policy));
  CHECK(is_workload_kind("batch.volcano.sh/v1alpha1", "Job", *policy));
  CHECK_FALSE(is_workload_kind("example.com/v1", "Deployment", *policy));
  CHECK_FALSE(is_workload_kind("v1", "Service", *policy));
  CHECK_FALSE(is_workload_kind("v1", "PodTemplate", *policy));
}

TEST_CASE("workload: malformed objects yield no pod specs and never throw") {
  const PolicyPtr policy = empty_policy();
  for (
      const char* text :
      {R"(null)", R"([])", R"({"kind":"Deployment"})",
       R"({"apiVersion":"apps/v1","kind":"Deployment","spec":[]})",
       R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":"x"}})",
       R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","spec":{"replicatedJobs":{"a":1}}})"}) {
    INFO(text);
    CHECK(find_pod_specs(Json::parse(text), *policy).empty());
  }
  // A pod spec of the wrong type is found (so that the pipeline can deny it with a reason).
  const Json bad = Json::parse(
      R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":"oops"}}})");
  CHECK(find_pod_specs(bad, *policy).size() == 1);
}

TEST_CASE("workload: dotted paths escape keys with dots and slashes") {
  CHECK(dotted_path(JsonPointer("/spec/containers/0/resources/limits/nvidia.com~1gpu")) ==
        "spec.containers[0].resources.limits[\"nvidia.com/gpu\"]");
  CHECK(dotted_path(JsonPointer("")).empty());
}

}  // namespace
}  // namespace workload_test
}  // namespace gpuadmit
