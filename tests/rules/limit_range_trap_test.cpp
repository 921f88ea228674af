#include "rules/limit_range_trap.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace limit_range_trap_test {
namespace {

std::string limit_range(std::string_view limits) {
  return R"({"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"lr"},"spec":{"limits":)" +
         std::string(limits) + "}}";
}

// SetDefaults_LimitRangeItem (pkg/apis/core/v1/defaults.go), for type Container only: max is
// copied into a missing default, default into a missing defaultRequest, then min into a still
// missing defaultRequest. LimitRanger then gives every container those defaults.
TEST_CASE("rule GPU016: LimitRange max/min for a GPU resource without a default",
          "[rules][GPU016]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_limit_range_trap_rule();
  REQUIRE(rule->id() == "GPU016");
  CHECK(rule->default_action() == Action::kDeny);
  CHECK(rule->handles("v1", "LimitRange"));
  CHECK_FALSE(rule->handles("v1", "ResourceQuota"));
  CHECK_FALSE(rule->handles("example.com/v1", "LimitRange"));

  const std::string max_message =
      "LimitRange lr spec.limits[0] (type Container) sets max[\"nvidia.com/gpu\"]: 2 without "
      "default[\"nvidia.com/gpu\"]; Kubernetes copies max into default and defaultRequest, so "
      "every container in namespace ml-a that does not set nvidia.com/gpu would be given 2 of "
      "it. Remove nvidia.com/gpu from max and cap GPUs with the policy's "
      "limits.maxGPUsPerContainer, or set default and defaultRequest for it explicitly";
  struct Case {
    std::string name;
    std::string object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"max without default",
       limit_range(R"([{"type":"Container","max":{"nvidia.com/gpu":"2","cpu":"4"}}])"),
       {"spec.limits[0].max[\"nvidia.com/gpu\"] | " + max_message}},
      {"max without default, defaultRequest alone does not help (default still becomes max)",
       limit_range(R"([{"type":"Container","max":{"nvidia.com/gpu":2},)"
                   R"("defaultRequest":{"nvidia.com/gpu":0}}])"),
       {"spec.limits[0].max[\"nvidia.com/gpu\"] | " + max_message}},
      {"max with an explicit default is fine",
       limit_range(R"([{"type":"Container","max":{"nvidia.com/gpu":"2"},)"
                   R"("default":{"nvidia.com/gpu":"0"}}])"),
       {}},
      {"min without default or defaultRequest, on a MIG resource",
       limit_range(R"([{"type":"Container","min":{"nvidia.com/mig-1g.10gb":"1"}}])"),
       {"spec.limits[0].min[\"nvidia.com/mig-1g.10gb\"] | LimitRange lr spec.limits[0] (type "
        "Container) sets min[\"nvidia.com/mig-1g.10gb\"]: 1 without default or defaultRequest; "
        "Kubernetes copies min into defaultRequest, so every container in namespace ml-a that "
        "does not set nvidia.com/mig-1g.10gb would request 1 of it. Remove "
        "nvidia.com/mig-1g.10gb from min, or set default and defaultRequest for it explicitly"}},
      {"min with defaultRequest is fine",
       limit_range(R"([{"type":"Container","min":{"nvidia.com/gpu":"1"},)"
                   R"("defaultRequest":{"nvidia.com/gpu":"1"}}])"),
       {}},
      {"min and max: reported once, at max",
       limit_range(R"([{"type":"Container","min":{"nvidia.com/gpu":"1"},)"
                   R"("max":{"nvidia.com/gpu":"2"}}])"),
       {"spec.limits[0].max[\"nvidia.com/gpu\"] | " + max_message}},
      {"a policy's extra GPU resource counts; every item is reported",
       limit_range(R"([{"type":"Container","max":{"cpu":"4"}},)"
                   R"({"type":"Container","max":{"amd.com/gpu":"1"}}])"),
       {"spec.limits[1].max[\"amd.com/gpu\"] | LimitRange lr spec.limits[1] (type Container) "
        "sets max[\"amd.com/gpu\"]: 1 without default[\"amd.com/gpu\"]; Kubernetes copies max "
        "into default and defaultRequest, so every container in namespace ml-a that does not "
        "set amd.com/gpu would be given 1 of it. Remove amd.com/gpu from max and cap GPUs with "
        "the policy's limits.maxGPUsPerContainer, or set default and defaultRequest for it "
        "explicitly"}},
      {"zero max is harmless; Pod and PersistentVolumeClaim items are not defaulted",
       limit_range(R"([{"type":"Container","max":{"nvidia.com/gpu":"0"}},)"
                   R"({"type":"Pod","max":{"nvidia.com/gpu":"8"}},)"
                   R"({"type":"PersistentVolumeClaim","min":{"nvidia.com/gpu":"1"}}])"),
       {}},
      {"malformed items never throw", limit_range(R"([1, {"max": 3}, {"type":"Container"}])"), {}},
      {"no spec", R"({"apiVersion":"v1","kind":"LimitRange"})", {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      CHECK(check_document(*rule, policy, c.object, "ml-a") == c.expected);
    }
  }
}

}  // namespace
}  // namespace limit_range_trap_test
}  // namespace gpuadmit::testing
