#include "rules/fits_on_node.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace fits_on_node_test {
namespace {

std::string res(std::string_view name, std::string_view resource, int n,
                std::string_view extra = "") {
  const std::string q = "{\"" + std::string(resource) + "\":\"" + std::to_string(n) + "\"}";
  return container(name, q, q, extra);
}

std::string on(std::string_view cls, std::string_view profile = "") {
  std::string a = "{\"gpuadmit.io/class\":\"" + std::string(cls) + "\"";
  if (!profile.empty()) a += ",\"gpuadmit.io/mig-profile\":\"" + std::string(profile) + "\"";
  return a + "}";
}

TEST_CASE("rule GPU006: GPUs must fit on one node of the class", "[rules][GPU006]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_fits_on_node_rule();
  REQUIRE(rule->id() == "GPU006");
  const std::string kSplit = ", or split the work across pods";
  run_cases(
      *rule, policy,
      {
          {"a full node passes",
           "open",
           make_pod(res("t", "nvidia.com/gpu", 8), "", on("a100")),
           {}},
          {"a container larger than a node",
           "open",
           make_pod(res("trainer", "nvidia.com/gpu", 9), "", on("a100")),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu\"] | container trainer: "
            "nvidia.com/gpu 9 cannot fit on one node of class a100 (8 GPUs per node); request at "
            "most 8" +
            kSplit}},
          {"a limit-only container is reported at its limit",
           "open",
           make_pod(container("trainer", "", R"({"nvidia.com/gpu":16})"), "", on("a100")),
           {"spec.containers[0].resources.limits[\"nvidia.com/gpu\"] | container trainer: "
            "nvidia.com/gpu 16 cannot fit on one node of class a100 (8 GPUs per node); request "
            "at most 8" +
            kSplit}},
          {"containers that fit alone but not together",
           "open",
           make_pod(res("a", "nvidia.com/gpu", 6) + "," + res("b", "nvidia.com/gpu", 6), "",
                    on("a100")),
           {"spec | pod requests 12 GPUs (container a: 6, container b: 6) but a node of class "
            "a100 has 8; a pod runs on one node: request at most 8 per pod" +
            kSplit}},
          {"init containers do not add up",
           "open",
           make_pod(res("a", "nvidia.com/gpu", 8),
                    "\"initContainers\":[" + res("i", "nvidia.com/gpu", 8) + "]", on("a100")),
           {}},
          {"time-sliced replicas count per node",
           "open",
           make_pod(res("a", "nvidia.com/gpu.shared", 16), "", on("l4")),
           {}},
          {"more replicas than a time-sliced node has",
           "open",
           make_pod(res("a", "nvidia.com/gpu.shared", 17), "", on("l4")),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu.shared\"] | container a: "
            "nvidia.com/gpu.shared 17 cannot fit on one node of class l4 (4 GPUs per node \u00d7 "
            "4 time-slicing replicas = 16); request at most 16" +
            kSplit}},
          {"time-slicing without rename counts nvidia.com/gpu replicas",
           "open",
           make_pod(res("a", "nvidia.com/gpu", 9), "", on("t4")),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu\"] | container a: "
            "nvidia.com/gpu 9 cannot fit on one node of class t4 (4 GPUs per node \u00d7 2 "
            "time-slicing replicas = 8); request at most 8" +
            kSplit}},
          {"MIG slices per node (mixed strategy)",
           "open",
           make_pod(res("a", "nvidia.com/mig-3g.40gb", 17) + "," +
                        res("b", "nvidia.com/mig-1g.10gb", 56),
                    "", on("mig")),
           {"spec.containers[0].resources.requests[\"nvidia.com/mig-3g.40gb\"] | container a: "
            "nvidia.com/mig-3g.40gb 17 cannot fit on one node of class mig (8 GPUs per node "
            "\u00d7 at most 2 3g.40gb slices each = 16); request at most 16" +
            kSplit}},
          {"MIG devices per node (single strategy)",
           "open",
           make_pod(res("a", "nvidia.com/gpu", 17), "", on("mig-single", "3g.40gb")),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu\"] | container a: "
            "nvidia.com/gpu 17 cannot fit on one node of class mig-single (8 GPUs per node "
            "\u00d7 at most 2 3g.40gb slices each = 16); request at most 16" +
            kSplit}},
          {"a class without gpusPerNode is not checked",
           "open",
           make_pod(res("a", "nvidia.com/gpu", 100), "", on("v100")),
           {}},
          {"a pod without a class is not checked",
           "open",
           make_pod(res("a", "nvidia.com/gpu", 100)),
           {}},
          {"the tenant's default class is used",
           "ml-a",
           make_pod(res("a", "nvidia.com/gpu", 9)),
           {"spec.containers[0].resources.requests[\"nvidia.com/gpu\"] | container a: "
            "nvidia.com/gpu 9 cannot fit on one node of class a100 (8 GPUs per node); request at "
            "most 8" +
            kSplit}},
      });
}

}  // namespace
}  // namespace fits_on_node_test
}  // namespace gpuadmit::testing
