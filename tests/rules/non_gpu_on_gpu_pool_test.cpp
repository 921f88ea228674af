#include "rules/non_gpu_on_gpu_pool.h"

#include "engine/node_source.h"
#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace non_gpu_on_gpu_pool_test {
namespace {

constexpr std::string_view kWhat =
    ", but the pod asks for no GPU; remove it, or request a GPU if the pod needs one";

std::string web() { return container("web", R"({"cpu":"1"})"); }

std::string tolerating(std::string_view tolerations) {
  return make_pod(web(), "\"tolerations\":" + std::string(tolerations));
}

std::string required(std::string_view terms) {
  return make_pod(web(),
                  R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
                  R"({"nodeSelectorTerms":)" +
                      std::string(terms) + "}}}");
}

TEST_CASE("rule GPU009: non-GPU pods must not tolerate or select GPU pools", "[rules][GPU009]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_non_gpu_on_gpu_pool_rule();
  REQUIRE(rule->id() == "GPU009");
  REQUIRE(rule->default_action() == Action::kDeny);
  const std::string kTerms =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms";
  run_cases(
      *rule, policy,
      {
          {"a plain pod passes", "default", make_pod(web()), {}},
          {"tolerating the shared GPU taint",
           "default",
           tolerating(R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])"),
           {"spec.tolerations[0] | toleration "
            "{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"} "
            "tolerates the taint nvidia.com/gpu:NoSchedule of GPU pools a100, mig, l4" +
            std::string(kWhat)}},
          {"a wildcard toleration tolerates every GPU pool",
           "default",
           tolerating(R"([{"key":"other","operator":"Exists"},{"operator":"Exists"}])"),
           {"spec.tolerations[1] | toleration {\"operator\":\"Exists\"} tolerates the taint "
            "nvidia.com/gpu:NoSchedule of GPU pools a100, mig, l4" +
            std::string(kWhat)}},
          {"tolerating one pool's own taint",
           "default",
           tolerating(
               R"([{"key":"pool.example.com/a100","operator":"Equal","value":"true","effect":"NoSchedule"}])"),
           {"spec.tolerations[0] | toleration "
            "{\"key\":\"pool.example.com/a100\",\"operator\":\"Equal\",\"value\":\"true\","
            "\"effect\":\"NoSchedule\"} tolerates the taint "
            "pool.example.com/a100=true:NoSchedule of GPU pool a100" +
            std::string(kWhat)}},
          {"a toleration of another value or effect does not tolerate the pool",
           "default",
           tolerating(R"([{"key":"pool.example.com/a100","operator":"Equal","value":"false"},
                          {"key":"nvidia.com/gpu","operator":"Exists","effect":"NoExecute"},
                          {"key":"node.kubernetes.io/not-ready","operator":"Exists"}])"),
           {}},
          {"a nodeSelector on a pool's label and value",
           "default",
           make_pod(web(), R"("nodeSelector":{"kubernetes.io/os":"linux",
                                              "nvidia.com/gpu.product":"NVIDIA-L4"})"),
           {"spec.nodeSelector[\"nvidia.com/gpu.product\"] | nodeSelector "
            "nvidia.com/gpu.product=NVIDIA-L4 selects GPU pool l4" +
            std::string(kWhat)}},
          {"a nodeSelector on a pool label with another value",
           "default",
           make_pod(web(), R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-T1000"})"),
           {}},
          {"required affinity In and Exists",
           "default",
           required(R"([{"matchExpressions":[
                {"key":"kubernetes.io/os","operator":"In","values":["linux"]},
                {"key":"nvidia.com/gpu.product","operator":"In","values":["foo","NVIDIA-A100-SXM4-80GB"]}]},
              {"matchExpressions":[{"key":"pool.example.com/mig","operator":"Exists"}]}])"),
           {kTerms +
                "[0].matchExpressions[1] | required node affinity nvidia.com/gpu.product In [foo, "
                "NVIDIA-A100-SXM4-80GB] selects GPU pool a100" +
                std::string(kWhat),
            kTerms +
                "[1].matchExpressions[0] | required node affinity pool.example.com/mig Exists "
                "selects GPU pool mig" +
                std::string(kWhat)}},
          {"NotIn and DoesNotExist keep pods away from pools: fine",
           "default",
           required(R"([{"matchExpressions":[
                {"key":"nvidia.com/gpu.product","operator":"NotIn","values":["NVIDIA-L4"]},
                {"key":"pool.example.com/mig","operator":"DoesNotExist"}]}])"),
           {}},
          {"a zero GPU quantity makes no GPU pod",
           "default",
           make_pod(container("web", R"({"nvidia.com/gpu":"0"})"),
                    R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}])"),
           {"spec.tolerations[0] | toleration {\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\"} "
            "tolerates the taint nvidia.com/gpu:NoSchedule of GPU pools a100, mig, l4" +
            std::string(kWhat)}},
          {"GPU pods may tolerate and select pools",
           "default",
           make_pod(container("t", R"({"nvidia.com/gpu":"1"})"),
                    R"("tolerations":[{"operator":"Exists"}],
                       "nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"})"),
           {}},
          {"DaemonSet templates are excepted in a nodeAgents namespace",
           "node-agents",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{
               "template":{"spec":{"containers":[{"name":"agent"}],
               "tolerations":[{"operator":"Exists"}]}}}})",
           {}},
          {"DaemonSet templates elsewhere are judged like any workload",
           "default",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{
               "template":{"spec":{"containers":[{"name":"agent"}],
               "tolerations":[{"operator":"Exists"}]}}}})",
           {"spec.template.spec.tolerations[0] | toleration {\"operator\":\"Exists\"} tolerates "
            "the taint nvidia.com/gpu:NoSchedule of GPU pools a100, mig, l4" +
            std::string(kWhat)}},
          {"templates report template paths",
           "default",
           make_deployment(web(),
                           R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}])"),
           {"spec.template.spec.tolerations[0] | toleration "
            "{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\"} tolerates the taint "
            "nvidia.com/gpu:NoSchedule of GPU pools a100, mig, l4" +
            std::string(kWhat)}},
      });
}

TEST_CASE("rule GPU009: DaemonSet-owned pods are excepted in nodeAgents namespaces only",
          "[rules][GPU009]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_non_gpu_on_gpu_pool_rule();
  PodFixture agent(policy, tolerating(R"([{"operator":"Exists"}])"), "node-agents");
  CHECK(check_rule(*rule, agent).size() == 1);
  agent.request.daemonset_owned = true;
  CHECK(check_rule(*rule, agent).empty());
  // Anyone may write a DaemonSet ownerReference, or create a DaemonSet, in their namespace.
  PodFixture tenant(policy, tolerating(R"([{"operator":"Exists"}])"), "ml-a");
  tenant.request.daemonset_owned = true;
  CHECK(check_rule(*rule, tenant).size() == 1);
}

// spec.nodeName: judged with the cluster's Nodes (RequestContext::nodes: `serve --node-watch`),
// never without them (docs/rules.md, GPU009).
TEST_CASE("rule GPU009: nodeName onto a GPU pool's node", "[rules][GPU009]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_non_gpu_on_gpu_pool_rule();
  const StaticNodeSource nodes({Json::parse(R"({"kind":"Node","metadata":{"name":"gpu-l4-2",
      "labels":{"nvidia.com/gpu.product":"NVIDIA-L4"}}})"),
                                Json::parse(R"({"kind":"Node","metadata":{"name":"mig-h100-1",
      "labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"}}})"),
                                Json::parse(R"({"kind":"Node","metadata":{"name":"cpu-1",
      "labels":{"kubernetes.io/os":"linux"}}})")});
  auto bound = [&](const std::string& node) {
    return make_pod(web(), "\"nodeName\":\"" + node + "\"");
  };
  {
    PodFixture pod(policy, bound("gpu-l4-2"), "default");
    CHECK(check_rule(*rule, pod).empty());  // no Nodes known: not judged
    pod.request.nodes = &nodes;
    CHECK(check_rule(*rule, pod) ==
          std::vector<std::string>{"spec.nodeName | nodeName gpu-l4-2 binds the pod to a node of "
                                   "GPU pool l4" +
                                   std::string(kWhat)});
  }
  {
    // MIG strategy single: GPU Feature Discovery's product label for the profile.
    PodFixture pod(policy, bound("mig-h100-1"), "default");
    pod.request.nodes = &nodes;
    CHECK(check_rule(*rule, pod) ==
          std::vector<std::string>{"spec.nodeName | nodeName mig-h100-1 binds the pod to a node of "
                                   "GPU pool mig-single" +
                                   std::string(kWhat)});
  }
  for (const char* node : {"cpu-1", "gone-7"}) {
    PodFixture pod(policy, bound(node), "default");
    pod.request.nodes = &nodes;
    CHECK(check_rule(*rule, pod).empty());
  }
  {
    // A GPU pod bound to a GPU node is another rule's business (the kubelet checks its class).
    PodFixture pod(
        policy,
        make_pod(container("train", R"({"nvidia.com/gpu":"1"})"), R"("nodeName":"gpu-l4-2")"),
        "default");
    pod.request.nodes = &nodes;
    CHECK(check_rule(*rule, pod).empty());
  }
}

}  // namespace
}  // namespace non_gpu_on_gpu_pool_test
}  // namespace gpuadmit::testing
