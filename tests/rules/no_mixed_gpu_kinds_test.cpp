#include "rules/no_mixed_gpu_kinds.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace no_mixed_gpu_kinds_test {
namespace {

TEST_CASE("rule GPU008: a container must not mix GPU kinds", "[rules][GPU008]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_no_mixed_gpu_kinds_rule();
  REQUIRE(rule->id() == "GPU008");
  run_cases(
      *rule, policy,
      {
          {"one kind passes",
           "open",
           make_pod(container("a", R"({"nvidia.com/gpu":"2","amd.com/gpu":"1"})")),
           {}},
          {"several MIG profiles are one kind",
           "open",
           make_pod(
               container("a", R"({"nvidia.com/mig-1g.10gb":"2","nvidia.com/mig-2g.20gb":"1"})")),
           {}},
          {"different kinds in different containers pass",
           "open",
           make_pod(container("a", R"({"nvidia.com/gpu":"1"})") + "," +
                    container("b", R"({"nvidia.com/mig-1g.10gb":"1"})")),
           {}},
          {"whole and MIG",
           "open",
           make_pod(container("trainer", R"({"nvidia.com/gpu":"1","nvidia.com/mig-1g.10gb":"1"})")),
           {"spec.containers[0].resources | container trainer: mixes whole GPUs (nvidia.com/gpu "
            "1) and MIG slices (nvidia.com/mig-1g.10gb 1); ask for one kind per container"}},
          {"all three kinds, from requests and limits",
           "open",
           make_pod(container("x", R"({"nvidia.com/gpu.shared":"1"})",
                              R"({"nvidia.com/mig-3g.40gb":"1","amd.com/gpu":"2"})")),
           {"spec.containers[0].resources | container x: mixes whole GPUs (amd.com/gpu 2), shared "
            "GPUs (nvidia.com/gpu.shared 1) and MIG slices (nvidia.com/mig-3g.40gb 1); ask for "
            "one kind per container"}},
          {"a zero quantity is no GPU of that kind",
           "open",
           make_pod(container("a", R"({"nvidia.com/gpu":"0","nvidia.com/gpu.shared":"1"})")),
           {}},
          {"init containers are checked",
           "open",
           make_pod(
               container("a", ""),
               "\"initContainers\":[" +
                   container("setup", R"({"nvidia.com/gpu":"1","nvidia.com/gpu.shared":"1"})") +
                   "]"),
           {"spec.initContainers[0].resources | init container setup: mixes whole GPUs "
            "(nvidia.com/gpu 1) and shared GPUs (nvidia.com/gpu.shared 1); ask for one kind per "
            "container"}},
      });
}

}  // namespace
}  // namespace no_mixed_gpu_kinds_test
}  // namespace gpuadmit::testing
