#include "rules/resource_quota_key.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace resource_quota_key_test {
namespace {

std::string quota(std::string_view hard) {
  return R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":)" +
         std::string(hard) + "}}";
}

// The quota evaluator for pods (pkg/quota/v1/evaluator/core/pods.go podComputeUsageHelper)
// charges extended resources only as requests.<name>; API validation accepts the bare and
// limits. forms for names with a "/", and then nothing enforces them.
TEST_CASE("rule GPU017: ResourceQuota keys for GPUs must use requests.", "[rules][GPU017]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_resource_quota_key_rule();
  REQUIRE(rule->id() == "GPU017");
  CHECK(rule->default_action() == Action::kDeny);
  CHECK(rule->handles("v1", "ResourceQuota"));
  CHECK_FALSE(rule->handles("v1", "LimitRange"));

  auto message = [](const std::string& key, const std::string& value, const std::string& res) {
    return "spec.hard[\"" + key + "\"] | ResourceQuota q in namespace ml-a sets hard[\"" + key +
           "\"]: " + value +
           ", which Kubernetes does not enforce: extended resources are counted only as "
           "requests." +
           res + "; rename the key to requests." + res;
  };
  struct Case {
    std::string name;
    std::string object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"the bare name and the limits. form, each reported",
       quota(R"({"nvidia.com/gpu":"4","limits.nvidia.com/gpu.shared":2,"limits.cpu":"8"})"),
       {message("nvidia.com/gpu", "4", "nvidia.com/gpu"),
        message("limits.nvidia.com/gpu.shared", "2", "nvidia.com/gpu.shared")}},
      {"MIG and policy-declared GPU resources count",
       quota(R"({"limits.nvidia.com/mig-1g.10gb":"7","amd.com/gpu":"1"})"),
       {message("limits.nvidia.com/mig-1g.10gb", "7", "nvidia.com/mig-1g.10gb"),
        message("amd.com/gpu", "1", "amd.com/gpu")}},
      {"requests. is the enforced form", quota(R"({"requests.nvidia.com/gpu":"4"})"), {}},
      {"with requests. present the other key is only redundant",
       quota(R"({"requests.nvidia.com/gpu":"4","limits.nvidia.com/gpu":"4"})"),
       {}},
      {"non-GPU keys are not this rule's business",
       quota(R"({"cpu":"8","limits.memory":"64Gi","example.com/foo":"1"})"),
       {}},
      {"malformed quotas never throw", quota("[1,2]"), {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      CHECK(check_document(*rule, policy, c.object, "ml-a") == c.expected);
    }
  }
}

}  // namespace
}  // namespace resource_quota_key_test
}  // namespace gpuadmit::testing
