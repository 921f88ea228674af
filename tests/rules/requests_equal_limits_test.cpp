#include "rules/requests_equal_limits.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace requests_equal_limits_test {
namespace {

TEST_CASE("rule GPU001: requests must equal limits", "[rules][GPU001]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_requests_equal_limits_rule();
  REQUIRE(rule->id() == "GPU001");
  REQUIRE(rule->default_action() == Action::kDeny);
  const std::string kLimits = "spec.containers[0].resources.limits[\"nvidia.com/gpu\"]";
  run_cases(
      *rule, policy,
      {
          {"equal values pass",
           "ml-a",
           make_pod(container("trainer", R"({"nvidia.com/gpu":"2"})", R"({"nvidia.com/gpu":"2"})")),
           {}},
          {"equal values in different notation pass",
           "ml-a",
           make_pod(
               container("trainer", R"({"nvidia.com/gpu":"2000m"})", R"({"nvidia.com/gpu":2})")),
           {}},
          {"a limit without a request passes (the API server defaults the request to it)",
           "ml-a",
           make_pod(container("trainer", "", R"({"nvidia.com/gpu":"1"})")),
           {}},
          {"request differs from limit",
           "ml-a",
           make_pod(container("trainer", R"({"nvidia.com/gpu":"1"})", R"({"nvidia.com/gpu":"2"})")),
           {kLimits +
            " | container trainer: nvidia.com/gpu request 1 \u2260 limit 2; set both to the same "
            "whole number"}},
          {"a request without a limit",
           "ml-a",
           make_pod(container("trainer", R"({"nvidia.com/gpu":"1","cpu":"1"})", R"({"cpu":"1"})")),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu\"] | container trainer: "
            "nvidia.com/gpu request 1 has no limit; set limits[\"nvidia.com/gpu\"] to 1 as well"}},
          {"zero request against a positive limit",
           "ml-a",
           make_pod(container("trainer", R"({"nvidia.com/gpu":"0"})", R"({"nvidia.com/gpu":"1"})")),
           {kLimits +
            " | container trainer: nvidia.com/gpu request 0 \u2260 limit 1; set both to the same "
            "whole number"}},
          {"every container and resource is reported, init and policy resources included",
           "ml-a",
           make_pod(container("a", R"({"nvidia.com/gpu":"1"})", R"({"nvidia.com/gpu":"1"})") + "," +
                        container("b", R"({"amd.com/gpu":"1","nvidia.com/mig-1g.10gb":2})",
                                  R"({"amd.com/gpu":"3","nvidia.com/mig-1g.10gb":"1"})"),
                    "\"initContainers\":[" +
                        container("setup", R"({"nvidia.com/gpu.shared":"2"})",
                                  R"({"nvidia.com/gpu.shared":"1"})") +
                        "]"),
           {"spec.initContainers[0].resources.limits[\"nvidia.com/gpu.shared\"] | init container "
            "setup: nvidia.com/gpu.shared request 2 \u2260 limit 1; set both to the same whole "
            "number",
            "spec.containers[1].resources.limits[\"amd.com/gpu\"] | container b: amd.com/gpu "
            "request 1 \u2260 limit 3; set both to the same whole number",
            "spec.containers[1].resources.limits[\"nvidia.com/mig-1g.10gb\"] | container b: "
            "nvidia.com/mig-1g.10gb request 2 \u2260 limit 1; set both to the same whole number"}},
          {"non-GPU resources are not this rule's",
           "ml-a",
           make_pod(container("web", R"({"cpu":"1"})", R"({"cpu":"2"})")),
           {}},
          {"unparsable values are left to GPU002",
           "ml-a",
           make_pod(
               container("trainer", R"({"nvidia.com/gpu":"one"})", R"({"nvidia.com/gpu":"2"})")),
           {}},
          {"an unnamed container is named by its path",
           "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
               {"resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"4"}}}]}})",
           {kLimits +
            " | container spec.containers[0]: nvidia.com/gpu request 1 \u2260 limit 4; set both to "
            "the same whole number"}},
          {"templates are checked the same way, with their paths",
           "open",
           make_deployment(
               container("trainer", R"({"nvidia.com/gpu":"1"})", R"({"nvidia.com/gpu":"2"})")),
           {"spec.template.spec.containers[0].resources.limits[\"nvidia.com/gpu\"] | container "
            "trainer: nvidia.com/gpu request 1 \u2260 limit 2; set both to the same whole "
            "number"}},
      });
}

}  // namespace
}  // namespace requests_equal_limits_test
}  // namespace gpuadmit::testing
