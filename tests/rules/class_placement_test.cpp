#include "rules/class_placement.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace class_placement_test {
namespace {

std::string gpu() { return container("t", R"({"nvidia.com/gpu":"1"})"); }

std::string on(std::string_view cls, std::string_view profile = "") {
  std::string a = "{\"gpuadmit.io/class\":\"" + std::string(cls) + "\"";
  if (!profile.empty()) a += ",\"gpuadmit.io/mig-profile\":\"" + std::string(profile) + "\"";
  return a + "}";
}

std::string terms(std::string_view t) {
  return R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
         R"({"nodeSelectorTerms":)" +
         std::string(t) + "}}}";
}

TEST_CASE("rule GPU011: the pod's own placement must not contradict its class", "[rules][GPU011]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_class_placement_rule();
  REQUIRE(rule->id() == "GPU011");
  const std::string kWhat = "; remove the contradicting constraint or choose another class";
  run_cases(
      *rule, policy,
      {
          {"a matching nodeSelector passes",
           "open",
           make_pod(gpu(), R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"})",
                    on("a100")),
           {}},
          {"a contradicting nodeSelector",
           "open",
           make_pod(gpu(), R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"})", on("a100")),
           {"spec | class a100: nodeSelector nvidia.com/gpu.product=NVIDIA-L4 allows none of the "
            "class's nvidia.com/gpu.product values [NVIDIA-A100-SXM4-80GB]" +
            kWhat}},
          {"one compatible term is enough (terms are ORed)",
           "open",
           make_pod(
               gpu(),
               terms(
                   R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4"]}]},
                              {"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}])"),
               on("a100")),
           {}},
          {"every term contradicts the class",
           "open",
           make_pod(
               gpu(),
               terms(
                   R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"NotIn","values":["NVIDIA-A100-SXM4-80GB"]}]}])"),
               on("a100")),
           {"spec | class a100: required node affinity nodeSelectorTerms[0] "
            "(nvidia.com/gpu.product NotIn [NVIDIA-A100-SXM4-80GB]) allows none of the class's "
            "nvidia.com/gpu.product values [NVIDIA-A100-SXM4-80GB]" +
            kWhat}},
          {"MIG single: the class targets the MIG product the mutation writes",
           "open",
           make_pod(
               gpu(),
               terms(
                   R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"]}]}])"),
               on("mig-single", "3g.40gb")),
           {}},
          {"MIG single: the plain product contradicts a MIG profile",
           "open",
           make_pod(gpu(), R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"})",
                    on("mig-single", "3g.40gb")),
           {"spec | class mig-single: nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 "
            "allows none of the class's nvidia.com/gpu.product values "
            "[NVIDIA-H100-80GB-HBM3-MIG-3g.40gb]" +
            kWhat}},
          {"non-GPU pods are GPU009's",
           "open",
           make_pod(container("web", ""), R"("nodeSelector":{"nvidia.com/gpu.product":"x"})",
                    on("a100")),
           {}},
          {"an unknown class is GPU004's",
           "open",
           make_pod(gpu(), R"("nodeSelector":{"nvidia.com/gpu.product":"x"})", on("h200")),
           {}},
      });
}

}  // namespace
}  // namespace class_placement_test
}  // namespace gpuadmit::testing
