#include "rules/whole_gpu_quantities.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace whole_gpu_quantities_test {
namespace {

constexpr std::string_view kFraction =
    " is not a whole number; a GPU cannot be split by quantity: write a whole number such as 1, "
    "or use a MIG profile (gpuadmit.io/mig-profile) or a time-sliced class";

TEST_CASE("rule GPU002: GPU quantities must be whole numbers", "[rules][GPU002]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_whole_gpu_quantities_rule();
  REQUIRE(rule->id() == "GPU002");
  const std::string kReq = "spec.containers[0].resources.requests[\"nvidia.com/gpu\"]";
  const std::string kLim = "spec.containers[0].resources.limits[\"nvidia.com/gpu\"]";
  auto gpu = [](std::string_view q) {
    return make_pod(container("trainer", "{\"nvidia.com/gpu\":" + std::string(q) + "}",
                              "{\"nvidia.com/gpu\":" + std::string(q) + "}"));
  };
  run_cases(
      *rule, policy,
      {
          {"1 passes", "ml-a", gpu("\"1\""), {}},
          {"a JSON number passes", "ml-a", gpu("2"), {}},
          {"2000m is the whole number 2 (the API server accepts it)", "ml-a", gpu("\"2000m\""), {}},
          {"1e1 is whole", "ml-a", gpu("\"1e1\""), {}},
          {"0 is not a GPU request and not a violation", "ml-a", gpu("\"0\""), {}},
          {"500m",
           "ml-a",
           gpu("\"500m\""),
           {kReq + " | container trainer: nvidia.com/gpu request 500m" + std::string(kFraction),
            kLim + " | container trainer: nvidia.com/gpu limit 500m" + std::string(kFraction)}},
          {"0.5 as a JSON number",
           "ml-a",
           gpu("0.5"),
           {kReq + " | container trainer: nvidia.com/gpu request 0.5" + std::string(kFraction),
            kLim + " | container trainer: nvidia.com/gpu limit 0.5" + std::string(kFraction)}},
          {"1.5",
           "ml-a",
           gpu("\"1.5\""),
           {kReq + " | container trainer: nvidia.com/gpu request 1.5" + std::string(kFraction),
            kLim + " | container trainer: nvidia.com/gpu limit 1.5" + std::string(kFraction)}},
          {"a negative quantity",
           "ml-a",
           make_pod(container("trainer", "", R"({"nvidia.com/gpu":"-1"})")),
           {kLim + " | container trainer: nvidia.com/gpu limit -1 is negative; write a whole "
                   "number of GPUs such as 1"}},
          {"an unparsable quantity is reported, never thrown",
           "ml-a",
           make_pod(
               container("trainer", R"({"nvidia.com/gpu":"one"})", R"({"nvidia.com/gpu":""})")),
           {kReq + " | container trainer: nvidia.com/gpu request \"one\" is not a valid "
                   "quantity; write a whole number of GPUs such as 1",
            kLim + " | container trainer: nvidia.com/gpu limit \"\" is not a valid "
                   "quantity; write a whole number of GPUs such as 1"}},
          {"shared, MIG and policy resources; init and ephemeral containers",
           "open",
           make_pod(container("app", R"({"amd.com/gpu":"0.25"})"),
                    "\"initContainers\":[" +
                        container("setup", "", R"({"nvidia.com/mig-1g.10gb":"1.5"})") +
                        "],\"ephemeralContainers\":[" +
                        container("debug", R"({"nvidia.com/gpu.shared":"100m"})") + "]"),
           {"spec.initContainers[0].resources.limits[\"nvidia.com/mig-1g.10gb\"] | init "
            "container setup: nvidia.com/mig-1g.10gb limit 1.5" +
                std::string(kFraction),
            "spec.containers[0].resources.requests[\"amd.com/gpu\"] | container app: "
            "amd.com/gpu request 0.25" +
                std::string(kFraction),
            "spec.ephemeralContainers[0].resources.requests[\"nvidia.com/gpu.shared\"] | "
            "ephemeral container debug: nvidia.com/gpu.shared request 100m" +
                std::string(kFraction)}},
          {"non-GPU resources may be fractional",
           "ml-a",
           make_pod(container("web", R"({"cpu":"500m"})", R"({"cpu":"1.5"})")),
           {}},
      });
}

}  // namespace
}  // namespace whole_gpu_quantities_test
}  // namespace gpuadmit::testing
