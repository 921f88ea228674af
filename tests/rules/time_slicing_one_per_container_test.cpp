#include "rules/time_slicing_one_per_container.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace time_slicing_one_per_container_test {
namespace {

std::string res(std::string_view name, std::string_view resource, std::string_view n) {
  const std::string q = "{\"" + std::string(resource) + "\":\"" + std::string(n) + "\"}";
  return container(name, q, q);
}

std::string on(std::string_view cls) {
  return "{\"gpuadmit.io/class\":\"" + std::string(cls) + "\"}";
}

TEST_CASE("rule GPU012: one shared GPU per container with failRequestsGreaterThanOne",
          "[rules][GPU012]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_time_slicing_one_per_container_rule();
  REQUIRE(rule->id() == "GPU012");
  const std::string kFail =
      " (failRequestsGreaterThanOne) would fail on the node with \"maximum request size for "
      "shared resources is 1\"; request 1 (more replicas of the same GPU add no compute), or use "
      "a class with whole GPUs";
  run_cases(
      *rule, policy,
      {
          {"one shared GPU per container passes",
           "open",
           make_pod(res("a", "nvidia.com/gpu.shared", "1") + "," +
                        res("b", "nvidia.com/gpu.shared", "1"),
                    "", on("l4")),
           {}},
          {"two shared GPUs in one container (renamed class)",
           "open",
           make_pod(res("a", "nvidia.com/gpu.shared", "2"), "", on("l4")),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu.shared\"] | container a: "
            "nvidia.com/gpu.shared 2 on time-sliced class l4" +
            kFail}},
          {"without rename the replicas are nvidia.com/gpu",
           "open",
           make_pod(container("a", "", R"({"nvidia.com/gpu":"3"})"),
                    "\"initContainers\":[" + res("i", "nvidia.com/gpu", "2") + "]", on("t4")),
           {"spec.initContainers[0].resources.requests[\"nvidia.com/gpu\"] | init container i: "
            "nvidia.com/gpu 2 on time-sliced class t4" +
                kFail,
            "spec.containers[0].resources.limits[\"nvidia.com/gpu\"] | container a: "
            "nvidia.com/gpu 3 on time-sliced class t4" +
                kFail}},
          {"a time-sliced class without failRequestsGreaterThanOne",
           "open",
           make_pod(res("a", "nvidia.com/gpu", "2"), "", on("v100")),
           {}},
          {"a class without time-slicing",
           "open",
           make_pod(res("a", "nvidia.com/gpu", "2"), "", on("a100")),
           {}},
      });
}

}  // namespace
}  // namespace time_slicing_one_per_container_test
}  // namespace gpuadmit::testing
