#include "rules/gpu_quota.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace gpu_quota_test {
namespace {

std::string gpus(std::string_view name, int n, std::string_view extra = "") {
  const std::string q = "{\"nvidia.com/gpu\":\"" + std::to_string(n) + "\"}";
  return container(name, q, q, extra);
}

TEST_CASE("rule GPU013: a pod's GPUs must not exceed the tenant's quota", "[rules][GPU013]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_gpu_quota_rule();
  REQUIRE(rule->id() == "GPU013");
  run_cases(
      *rule, policy,
      {
          {"within the quota", "research", make_pod(gpus("a", 3)), {}},
          {"over the quota",
           "research",
           make_pod(gpus("a", 2) + "," + gpus("b", 2)),
           {"spec | pod requests 4 GPUs (container a: 2, container b: 2), more than the GPU quota "
            "3 of tenant research; it could never start: request at most 3 GPUs, or ask for a "
            "larger quota"}},
          {"the effective request: init containers do not add up",
           "research",
           make_pod(gpus("a", 3), "\"initContainers\":[" + gpus("i", 3) + "]"),
           {}},
          {"an init container larger than the app containers",
           "research",
           make_pod(gpus("a", 1), "\"initContainers\":[" + gpus("i", 5) + "]"),
           {"spec | pod requests 5 GPUs (init container i: 5), more than the GPU quota 3 of "
            "tenant research; it could never start: request at most 3 GPUs, or ask for a larger "
            "quota"}},
          {"per pod, not per replica", "research", make_deployment(gpus("a", 3)), {}},
          {"a tenant without a quota", "open", make_pod(gpus("a", 100)), {}},
          {"a namespace of no tenant", "default", make_pod(gpus("a", 100)), {}},
      });
}

}  // namespace
}  // namespace gpu_quota_test
}  // namespace gpuadmit::testing
