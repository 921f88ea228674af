#include "rules/known_class.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace known_class_test {
namespace {

TEST_CASE("rule GPU004: gpuadmit.io/class must name a class of the policy", "[rules][GPU004]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_known_class_rule();
  REQUIRE(rule->id() == "GPU004");
  const std::string gpu = container("trainer", "", R"({"nvidia.com/gpu":"1"})");
  const std::string kUse = "use one of: a100, mig, mig-single, l4, t4, v100";
  run_cases(
      *rule, policy,
      {
          {"a known class passes",
           "ml-a",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"a100"})"),
           {}},
          {"no class setting passes", "ml-a", make_pod(gpu), {}},
          {"an unknown class",
           "ml-a",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"h200"})"),
           {"metadata.annotations[\"gpuadmit.io/class\"] | gpuadmit.io/class \"h200\" names no "
            "class of the policy; " +
            kUse}},
          {"an empty class",
           "open",
           make_pod(gpu, "", R"({"gpuadmit.io/class":""})"),
           {"metadata.annotations[\"gpuadmit.io/class\"] | gpuadmit.io/class \"\" names no class "
            "of the policy; " +
            kUse}},
          {"checked on non-GPU pods too",
           "default",
           make_pod(container("web", R"({"cpu":"1"})"), "", R"({"gpuadmit.io/class":"A100"})"),
           {"metadata.annotations[\"gpuadmit.io/class\"] | gpuadmit.io/class \"A100\" names no "
            "class of the policy; " +
            kUse}},
          {"a class on the top-level object of a template workload",
           "ml-a",
           R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j",
               "annotations":{"gpuadmit.io/class":"h100"}},
               "spec":{"template":{"spec":{"containers":[)" +
               gpu + "]}}}}",
           {"metadata.annotations[\"gpuadmit.io/class\"] | gpuadmit.io/class \"h100\" names no "
            "class of the policy; " +
            kUse}},
      });
}

}  // namespace
}  // namespace known_class_test
}  // namespace gpuadmit::testing
