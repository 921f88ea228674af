#include "rules/scheduler_scoring.h"

#include "tests/rules/config_rule_util.h"

namespace gpuadmit::testing {
namespace scheduler_scoring_test {
namespace {

std::string scheduler(const std::string& strategy, const std::string& name = "") {
  return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "profiles:\n- " +
         (name.empty() ? "" : "schedulerName: " + name + "\n  ") +
         "pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {}\n"
         "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n" +
         strategy;
}

// The strategies and their meaning: Kubernetes docs, "Resource Bin Packing"
// (kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/): MostAllocated and
// RequestedToCapacityRatio pack extended resources such as GPUs; LeastAllocated, the default
// (pkg/scheduler/apis/config/v1 SetDefaults_NodeResourcesFitArgs), prefers the emptiest node.
TEST_CASE("rule GPU030: LeastAllocated scoring of GPUs spreads them", "[rules][GPU030]") {
  const auto policy = policy_from_yaml(kFleetPolicy);
  const auto rule = make_scheduler_scoring_rule();
  REQUIRE(rule->id() == "GPU030");
  CHECK(rule->default_action() == Action::kWarn);
  CHECK(rule->handles("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"));
  CHECK(rule->handles("v1", "ConfigMap"));
  CHECK_FALSE(rule->handles("", ""));

  const std::string spreads =
      " with LeastAllocated (NodeResourcesFit scoringStrategy), which prefers the emptiest "
      "node: GPU pods spread over the GPU nodes and strand GPUs that a multi-GPU pod needs on one "
      "node; use MostAllocated, or RequestedToCapacityRatio with shape [{utilization: 0, score: "
      "0}, {utilization: 100, score: 10}]";
  const std::string gpu_weight =
      "        resources:\n        - {name: cpu, weight: 1}\n        - {name: nvidia.com/gpu, "
      "weight: 5}\n";
  struct Case {
    std::string name;
    Json object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"LeastAllocated on nvidia.com/gpu",
       yaml_object(scheduler("        type: LeastAllocated\n" + gpu_weight)),
       {"profiles[0].pluginConfig[1].args.scoringStrategy | scheduler profile default-scheduler "
        "scores nvidia.com/gpu" +
        spreads}},
      {"no type is LeastAllocated",
       yaml_object(scheduler(gpu_weight, "gpu-scheduler")),
       {"profiles[0].pluginConfig[1].args.scoringStrategy | scheduler profile gpu-scheduler "
        "scores nvidia.com/gpu" +
        spreads}},
      {"MIG and policy GPU resources count",
       yaml_object(scheduler("        type: LeastAllocated\n        resources:\n        - {name: "
                             "nvidia.com/mig-1g.10gb, weight: 1}\n        - {name: amd.com/gpu, "
                             "weight: 1}\n")),
       {"profiles[0].pluginConfig[1].args.scoringStrategy | scheduler profile default-scheduler "
        "scores nvidia.com/mig-1g.10gb" +
            spreads,
        "profiles[0].pluginConfig[1].args.scoringStrategy | scheduler profile default-scheduler "
        "scores amd.com/gpu" +
            spreads}},
      {"MostAllocated packs",
       yaml_object(scheduler("        type: MostAllocated\n" + gpu_weight)),
       {}},
      {"RequestedToCapacityRatio packs",
       yaml_object(scheduler("        type: RequestedToCapacityRatio\n" + gpu_weight)),
       {}},
      {"LeastAllocated over cpu and memory does not score GPUs",
       yaml_object(scheduler("        type: LeastAllocated\n        resources:\n        - {name: "
                             "cpu, weight: 1}\n        - {name: memory, weight: 1}\n")),
       {}},
      {"in a ConfigMap",
       config_map("scheduler-config",
                  {{"config.yaml", scheduler("        type: LeastAllocated\n" + gpu_weight)}}),
       {"data[\"config.yaml\"].profiles[0].pluginConfig[1].args.scoringStrategy | scheduler "
        "profile default-scheduler scores nvidia.com/gpu" +
        spreads}},
      {"malformed never throws",
       yaml_object("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles: [1, {pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: "
                   "{resources: [3, {name: 4}]}}}]}]\n"),
       {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(check_config(*rule, policy, c.object) == c.expected); }
  }
}

}  // namespace
}  // namespace scheduler_scoring_test
}  // namespace gpuadmit::testing
