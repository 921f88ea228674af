#include "rules/pod_level_gpu_resources.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace pod_level_gpu_resources_test {
namespace {

TEST_CASE("rule GPU015: GPUs in pod-level resources", "[rules][GPU015]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_pod_level_gpu_resources_rule();
  REQUIRE(rule->id() == "GPU015");
  const std::string c = container("t", "");
  run_cases(
      *rule, policy,
      {
          {"cpu and memory at pod level pass",
           "open",
           make_pod(c, R"("resources":{"requests":{"cpu":"1"},"limits":{"memory":"1Gi"}})"),
           {}},
          {"GPUs at pod level",
           "open",
           make_pod(c, R"("resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"},
                                       "limits":{"nvidia.com/gpu":1,"amd.com/gpu":"0"}})"),
           {"spec.resources.requests[\"nvidia.com/gpu\"] | pod-level resources.requests has "
            "nvidia.com/gpu 1: Kubernetes takes only cpu, memory and hugepages at pod level; move "
            "nvidia.com/gpu into the resources of the container that uses the GPU",
            "spec.resources.limits[\"nvidia.com/gpu\"] | pod-level resources.limits has "
            "nvidia.com/gpu 1: Kubernetes takes only cpu, memory and hugepages at pod level; move "
            "nvidia.com/gpu into the resources of the container that uses the GPU",
            "spec.resources.limits[\"amd.com/gpu\"] | pod-level resources.limits has amd.com/gpu "
            "0: Kubernetes takes only cpu, memory and hugepages at pod level; move amd.com/gpu "
            "into the resources of the container that uses the GPU"}},
          {"templates",
           "open",
           make_deployment(c, R"("resources":{"limits":{"nvidia.com/mig-1g.10gb":"1"}})"),
           {"spec.template.spec.resources.limits[\"nvidia.com/mig-1g.10gb\"] | pod-level "
            "resources.limits has nvidia.com/mig-1g.10gb 1: Kubernetes takes only cpu, memory and "
            "hugepages at pod level; move nvidia.com/mig-1g.10gb into the resources of the "
            "container that uses the GPU"}},
      });
}

}  // namespace
}  // namespace pod_level_gpu_resources_test
}  // namespace gpuadmit::testing
