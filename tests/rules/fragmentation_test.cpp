#include "rules/fragmentation.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace fragmentation_test {
namespace {

std::string gpus(std::string_view name, int n) {
  const std::string q = "{\"nvidia.com/gpu\":\"" + std::to_string(n) + "\"}";
  return container(name, q, q);
}

std::string on(std::string_view cls) {
  return "{\"gpuadmit.io/class\":\"" + std::string(cls) + "\"}";
}

TEST_CASE("rule GPU014: pod GPU counts that strand GPUs", "[rules][GPU014]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_fragmentation_rule();
  REQUIRE(rule->id() == "GPU014");
  REQUIRE(rule->default_action() == Action::kWarn);
  run_cases(
      *rule, policy,
      {
          {"divisors of the node size pass", "open", make_pod(gpus("a", 4), "", on("a100")), {}},
          {"a full node passes", "open", make_pod(gpus("a", 8), "", on("a100")), {}},
          {"5 on an 8-GPU node strands 3",
           "open",
           make_pod(gpus("trainer", 5), "", on("a100")),
           {"spec | pod requests 5 GPUs (container trainer: 5): 5 on an 8-GPU node of class a100 "
            "strands 3; request 1, 2, 4 or 8 GPUs per pod"}},
          {"counted per pod, across containers",
           "open",
           make_pod(gpus("a", 2) + "," + gpus("b", 1), "", on("a100")),
           {"spec | pod requests 3 GPUs (container a: 2, container b: 1): 3 on an 8-GPU node of "
            "class a100 strands 2; request 1, 2, 4 or 8 GPUs per pod"}},
          {"a pod larger than a node is GPU006's",
           "open",
           make_pod(gpus("a", 6) + "," + gpus("b", 6), "", on("a100")),
           {}},
          {"time-sliced and MIG classes are not checked",
           "open",
           make_pod(gpus("a", 3), "", on("t4")),
           {}},
          {"a class without gpusPerNode", "open", make_pod(gpus("a", 3), "", on("v100")), {}},
          {"the tenant's default class",
           "ml-a",
           make_pod(gpus("a", 3)),
           {"spec | pod requests 3 GPUs (container a: 3): 3 on an 8-GPU node of class a100 "
            "strands 2; request 1, 2, 4 or 8 GPUs per pod"}},
      });
}

TEST_CASE("rule GPU014: node sizes other than 8", "[rules][GPU014]") {
  auto policy = policy_from_yaml(R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: sizes}
spec:
  classes:
    four: {nodeSelector: {pool: [four]}, gpusPerNode: 4}
    eleven: {nodeSelector: {pool: [eleven]}, gpusPerNode: 11}
    big: {nodeSelector: {pool: [big]}, gpusPerNode: 100}
)YAML");
  auto rule = make_fragmentation_rule();
  run_cases(*rule, policy,
            {
                {"a 4-GPU node",
                 "default",
                 make_pod(gpus("render", 3), "", on("four")),
                 {"spec | pod requests 3 GPUs (container render: 3): 3 on a 4-GPU node of class "
                  "four strands 1; request 1, 2 or 4 GPUs per pod"}},
                {"an 11-GPU node",
                 "default",
                 make_pod(gpus("a", 2), "", on("eleven")),
                 {"spec | pod requests 2 GPUs (container a: 2): 2 on an 11-GPU node of class "
                  "eleven strands 1; request 1 or 11 GPUs per pod"}},
                {"a large node lists no divisors",
                 "default",
                 make_pod(gpus("a", 3), "", on("big")),
                 {"spec | pod requests 3 GPUs (container a: 3): 3 on a 100-GPU node of class big "
                  "strands 1; request a divisor of 100"}},
            });
}

}  // namespace
}  // namespace fragmentation_test
}  // namespace gpuadmit::testing
