#include "mutators/node_affinity.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace node_affinity_test {
namespace {

// A GPU pod with `annotations` and extra spec fields (`spec_prefix` ends with a comma).
std::string pod(const std::string& annotations, const std::string& spec_prefix = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" + annotations +
         R"(},"spec":{)" + spec_prefix +
         R"("containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}})";
}

std::string required(const std::string& terms) {
  return R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
         terms + "}}}";
}

const std::string kA100 =
    R"({"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-A100-SXM4-80GB"]})";
const std::string kZoneA = R"({"key":"zone","operator":"In","values":["a"]})";

TEST_CASE("mutator node-affinity: class expressions ANDed into every required term",
          "[mutators][node-affinity]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_node_affinity_mutator();
  CHECK(mutator->name() == "node-affinity");
  const std::string a100 = R"({"gpuadmit.io/class":"a100"})";
  const std::string one_term = required(R"([{"matchExpressions":[)" + kA100 + "]}]");
  run_mutation_cases(
      *mutator, policy,
      {
          {"no affinity: one new term", "ml-a", pod(a100),
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
               {"gpuadmit.io/class":"a100"}},"spec":{"containers":[{"name":"c","resources":
               {"limits":{"nvidia.com/gpu":1}}}],"affinity":)" +
               one_term + "}}"},
          {"two class labels: two expressions in policy order", "web-a",
           pod(R"({})", R"("affinity":null,)"),
           pod(R"({})", R"("affinity":)" + required(R"([{"matchExpressions":[
               {"key":"nvidia.com/gpu.product","operator":"In","values":["Tesla-T4"]},
               {"key":"cloud.example.com/pool","operator":"In","values":["t4-a","t4-b"]}]}])") +
                            ",")},
          {"appended to every existing term (terms are ORed)", "ml-a",
           pod(a100, R"("affinity":)" +
                         required(R"([{"matchExpressions":[)" + kZoneA +
                                  R"(]},{"matchExpressions":[{"key":"zone",
                                                 "operator":"NotIn","values":["c"]}]}])") +
                         ","),
           pod(a100, R"("affinity":)" +
                         required(R"([{"matchExpressions":[)" + kZoneA + "," + kA100 +
                                  R"(]},{"matchExpressions":[{"key":"zone",
                                  "operator":"NotIn","values":["c"]},)" +
                                  kA100 + "]}]") +
                         ",")},
          {"an expression already present (values in any order) is not added twice", "web-a",
           pod(R"({})", R"("affinity":)" + required(R"([{"matchExpressions":[
               {"key":"cloud.example.com/pool","operator":"In","values":["t4-b","t4-a"]}]}])") +
                            ","),
           pod(R"({})", R"("affinity":)" + required(R"([{"matchExpressions":[
               {"key":"cloud.example.com/pool","operator":"In","values":["t4-b","t4-a"]},
               {"key":"nvidia.com/gpu.product","operator":"In","values":["Tesla-T4"]}]}])") +
                            ",")},
          {"a narrower user expression is kept and the class expression added next to it", "web-a",
           pod(R"({})", R"("affinity":)" + required(R"([{"matchExpressions":[
               {"key":"cloud.example.com/pool","operator":"In","values":["t4-a"]}]}])") +
                            ","),
           pod(R"({})", R"("affinity":)" + required(R"([{"matchExpressions":[
               {"key":"cloud.example.com/pool","operator":"In","values":["t4-a"]},
               {"key":"nvidia.com/gpu.product","operator":"In","values":["Tesla-T4"]},
               {"key":"cloud.example.com/pool","operator":"In","values":["t4-a","t4-b"]}]}])") +
                            ",")},
          {"a term with matchFields only gets matchExpressions", "ml-a",
           pod(a100, R"("affinity":)" + required(R"([{"matchFields":[{"key":"metadata.name",
               "operator":"In","values":["n1"]}]}])") +
                         ","),
           pod(a100, R"("affinity":)" +
                         required(R"([{"matchFields":[{"key":"metadata.name",
               "operator":"In","values":["n1"]}],"matchExpressions":[)" +
                                  kA100 + "]}]") +
                         ",")},
          {"empty terms match no node and stay empty", "ml-a",
           pod(a100,
               R"("affinity":)" + required(R"([{},{"matchExpressions":[)" + kZoneA + "]}]") + ","),
           pod(a100, R"("affinity":)" +
                         required(R"([{},{"matchExpressions":[)" + kZoneA + "," + kA100 + "]}]") +
                         ",")},
          {"an empty term list gets a term", "ml-a",
           pod(a100, R"("affinity":)" + required("[]") + ","),
           pod(a100, R"("affinity":)" + one_term + ",")},
          {"podAntiAffinity and preferred node affinity are kept", "ml-a",
           pod(a100, R"("affinity":{"podAntiAffinity":{"x":1},"nodeAffinity":
               {"preferredDuringSchedulingIgnoredDuringExecution":[]}},)"),
           pod(a100, R"("affinity":{"podAntiAffinity":{"x":1},"nodeAffinity":
               {"preferredDuringSchedulingIgnoredDuringExecution":[],
               "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":
               [{"matchExpressions":[)" +
                         kA100 + "]}]}}},")},
          {"MIG single: the product label targets <product>-MIG-<profile>", "ml-a",
           pod(R"({"gpuadmit.io/class":"h100","gpuadmit.io/mig-profile":"1g.10gb+me"})"),
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
               {"gpuadmit.io/class":"h100","gpuadmit.io/mig-profile":"1g.10gb+me"}},"spec":
               {"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}],
               "affinity":)" +
               required(R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product",
                   "operator":"In","values":["NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me"]}]}])") +
               "}}"},
          {"a profile the class does not offer (GPU007): nothing", "ml-a",
           pod(R"({"gpuadmit.io/class":"h100","gpuadmit.io/mig-profile":"3g.40gb"})"), ""},
          {"the pod's nodeSelector contradicts the class (GPU011): nothing", "ml-a",
           pod(a100, R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"},)"), ""},
          {"every term contradicts the class (GPU011): nothing", "ml-a",
           pod(a100, R"("affinity":)" + required(R"([{"matchExpressions":[{"key":
               "nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4"]}]}])") +
                         ","),
           ""},
          {"a compatible nodeSelector is kept and the affinity added all the same", "ml-a",
           pod(a100, R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"},)"),
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
               {"gpuadmit.io/class":"a100"}},"spec":{"nodeSelector":{"nvidia.com/gpu.product":
               "NVIDIA-A100-SXM4-80GB"},"containers":[{"name":"c","resources":{"limits":
               {"nvidia.com/gpu":1}}}],"affinity":)" +
               one_term + "}}"},
          {"a non-GPU pod gets nothing", "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}})",
           ""},
      });
}

}  // namespace
}  // namespace node_affinity_test
}  // namespace gpuadmit::testing
