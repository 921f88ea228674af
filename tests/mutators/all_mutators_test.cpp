#include "mutators/all_mutators.h"

#include <string>
#include <vector>

#include "engine/pipeline.h"
#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace all_mutators_test {
namespace {

const Pipeline& mutators_only() {
  static const Pipeline pipeline(default_mutators(), {});
  return pipeline;
}

// Runs every mutator as the mutating webhook does and checks the patch and idempotence.
Evaluation evaluate_twice(const PolicyPtr& policy, const Json& object, const std::string& ns) {
  const Evaluation first =
      mutators_only().evaluate(object, {ns, Operation::kCreate, true}, *policy);
  CHECK(first.allowed);
  CHECK(object.patch(first.patch) == first.mutated);
  const Evaluation second =
      mutators_only().evaluate(first.mutated, {ns, Operation::kCreate, true}, *policy);
  INFO("second patch: " << second.patch.dump());
  CHECK(second.patch.empty());
  CHECK(second.mutated == first.mutated);
  return first;
}

TEST_CASE("mutator all: SPEC §4 order", "[mutators]") {
  std::vector<std::string> names;
  for (const auto& m : default_mutators()) names.emplace_back(m->name());
  CHECK(names == std::vector<std::string>{"requests-equal-limits", "class", "resource-names",
                                          "tolerations", "node-affinity", "defaults", "priority",
                                          "strip-gpu-pool", "gpu-visibility", "queue", "topology"});
}

TEST_CASE("mutator all: a GPU pod gets every mutation, once", "[mutators]") {
  auto policy = policy_from_yaml(fleet_policy());
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "annotations":{"gpuadmit.io/mig-profile":"1g.10gb","gpuadmit.io/workload":"training"}},
      "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}})");
  const Evaluation e = evaluate_twice(policy, pod, "ml-a");
  CHECK(e.mutations == std::vector<std::string>{"requests-equal-limits", "class", "resource-names",
                                                "tolerations", "node-affinity", "defaults",
                                                "priority"});
  const Json expected = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "annotations":{"gpuadmit.io/mig-profile":"1g.10gb","gpuadmit.io/workload":"training",
      "gpuadmit.io/class":"a100"}},"spec":{"containers":[{"name":"c","resources":{"limits":
      {"nvidia.com/mig-1g.10gb":1,"memory":"64Gi"},"requests":{"nvidia.com/mig-1g.10gb":1,
      "cpu":"8","memory":"48Gi"}}}],"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists",
      "effect":"NoSchedule"},{"key":"pool.example.com/a100","operator":"Equal","value":"true",
      "effect":"NoSchedule"}],"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":
      [{"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-A100-SXM4-80GB"]}]}]}}},
      "priorityClassName":"gpu-training","priority":10000,
      "preemptionPolicy":"PreemptLowerPriority"}})");
  CHECK(e.mutated.dump(2) == expected.dump(2));
}

TEST_CASE("mutator all: each pod spec of a workload is mutated on its own", "[mutators]") {
  auto policy = policy_from_yaml(fleet_policy());
  const Json ray = Json::parse(R"({"apiVersion":"ray.io/v1","kind":"RayCluster",
      "metadata":{"name":"r"},"spec":{"headGroupSpec":{"template":{"spec":{"containers":
      [{"name":"head"}]}}},"workerGroupSpecs":[{"replicas":2,"template":{"metadata":{"annotations":
      {"gpuadmit.io/class":"l4"}},"spec":{"containers":[{"name":"w","resources":{"limits":
      {"nvidia.com/gpu":1}}}]}}}]}})");
  const Evaluation e = evaluate_twice(policy, ray, "web-a");
  // The CPU-only head gets only NVIDIA_VISIBLE_DEVICES=void; the worker is renamed to the shared
  // resource.
  Json head = ray["spec"]["headGroupSpec"];
  head["template"]["spec"]["containers"][0]["env"] =
      Json::parse(R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}])");
  CHECK(e.mutated["spec"]["headGroupSpec"] == head);
  const Json& worker = e.mutated["spec"]["workerGroupSpecs"][0]["template"]["spec"];
  CHECK(worker["containers"][0]["resources"].dump() ==
        R"({"limits":{"nvidia.com/gpu.shared":1},"requests":{"nvidia.com/gpu.shared":1}})");
  CHECK(worker["priorityClassName"] == "gpu-inference");
  CHECK_FALSE(worker.contains("priority"));
}

TEST_CASE("mutator all: exempt namespaces and non-workloads pass untouched", "[mutators]") {
  std::string yaml = fleet_policy();
  yaml += "    exempt:\n      namespaces: [\"kube-system\"]\n";
  auto policy = policy_from_yaml(yaml);
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}})");
  const Evaluation exempt =
      mutators_only().evaluate(pod, {"kube-system", Operation::kCreate, true}, *policy);
  CHECK(exempt.exempt);
  CHECK(exempt.patch.empty());
  CHECK(exempt.mutations.empty());
  const Json config_map = Json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"c"},"spec":{"containers":[{"name":"c","resources":{"limits":
      {"nvidia.com/gpu":1}}}]}})");
  const Evaluation other =
      mutators_only().evaluate(config_map, {"ml-a", Operation::kCreate, true}, *policy);
  CHECK_FALSE(other.is_workload);
  CHECK(other.patch.empty());
}

TEST_CASE("mutator all: odd values never throw and stay idempotent", "[mutators]") {
  for (const char* mode : {"fix", "deny"}) {
    auto policy = policy_from_yaml(fleet_policy(mode, "strip"));
    const std::vector<std::string> specs = {
        R"({"containers":null,"initContainers":null,"tolerations":null,"affinity":null,
            "nodeSelector":null,"priorityClassName":null,"priority":null})",
        R"({"containers":[{"resources":null},{"resources":{"requests":null,"limits":null}},
            {"resources":{"limits":{"nvidia.com/gpu":"1e400","memory":"-1Gi","cpu":"1.5.5"}}},
            {"resources":{"limits":{"nvidia.com/gpu":1},"requests":{"cpu":"lots",
            "memory":null,"nvidia.com/gpu":null}}}]})",
        R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":9223372036854775807}}}],
            "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms":[{"matchExpressions":null,"matchFields":null},{}]}}},
            "tolerations":[{},{"key":null,"operator":null}],"preemptionPolicy":7})",
        R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":0.5}}}],
            "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product",
            "operator":"Gt","values":["x"]}]}]}}}})",
        R"({"nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"},"tolerations":[{"key":
            "nvidia.com/gpu","operator":"Exists"}],"containers":[{"resources":{"limits":
            {"cpu":"1"}}}]})",
    };
    for (const std::string& spec : specs) {
      for (const char* ns : {"ml-a", "web-a", "default"}) {
        INFO(mode << " " << ns << " " << spec);
        const Json pod = Json::parse(
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
                {"gpuadmit.io/mig-profile":"1g.10gb"}},"spec":)" +
            spec + "}");
        evaluate_twice(policy, pod, ns);
      }
    }
  }
}

}  // namespace
}  // namespace all_mutators_test
}  // namespace gpuadmit::testing
