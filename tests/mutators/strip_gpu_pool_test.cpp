#include "mutators/strip_gpu_pool.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace strip_gpu_pool_test {
namespace {

std::string pod(const std::string& spec_prefix,
                const std::string& containers = R"([{"name":"c"}])") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{)" + spec_prefix +
         R"("containers":)" + containers + "}}";
}

std::string required(const std::string& terms) {
  return R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
         terms + "}}}";
}

TEST_CASE("mutator strip-gpu-pool: non-GPU pods lose what places them on GPU pools",
          "[mutators][strip-gpu-pool]") {
  auto policy = policy_from_yaml(fleet_policy("fix", "strip"));
  auto mutator = make_strip_gpu_pool_mutator();
  CHECK(mutator->name() == "strip-gpu-pool");
  run_mutation_cases(
      *mutator, policy,
      {
          {"tolerations of pool taints go; others stay", "default",
           pod(R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
               {"key":"spot","operator":"Exists"},{"key":"pool.example.com/a100","value":"true"},
               {"key":"nvidia.com/gpu","operator":"Equal","value":"absent"}],)"),
           pod(R"("tolerations":[{"key":"spot","operator":"Exists"},
               {"key":"nvidia.com/gpu","operator":"Equal","value":"absent"}],)")},
          {"the key-less wildcard is kept (it tolerates far more than GPU pools)", "default",
           pod(R"("tolerations":[{"operator":"Exists"}],)"), ""},
          {"nodeSelector entries with a pool value go; other values and labels stay", "default",
           pod(R"("nodeSelector":{"nvidia.com/gpu.product":"Tesla-T4","kubernetes.io/os":"linux"},)"),
           pod(R"("nodeSelector":{"kubernetes.io/os":"linux"},)")},
          {"a label value no class has is not a pool", "default",
           pod(R"("nodeSelector":{"nvidia.com/gpu.product":"Tesla-K80"},)"), ""},
          {"from a required term only the pool values go; the user's own values and terms stay",
           "default",
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product",
               "operator":"In","values":["NVIDIA-L4","x"]},{"key":"zone","operator":"In",
               "values":["a"]}]},{"matchExpressions":[{"key":"zone","operator":"In",
               "values":["b"]}]}])") +
               ","),
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product",
               "operator":"In","values":["x"]},{"key":"zone","operator":"In",
               "values":["a"]}]},{"matchExpressions":[{"key":"zone","operator":"In",
               "values":["b"]}]}])") +
               ",")},
          {"an In left with no value goes; the term keeps the user's zone", "default",
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[{"key":"zone","operator":"In",
               "values":["a"]},{"key":"nvidia.com/gpu.product","operator":"In",
               "values":["Tesla-T4","NVIDIA-L4"]}]}])") +
               ","),
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[{"key":"zone","operator":"In",
               "values":["a"]}]}])") +
               ",")},
          {"a term left with matchFields only stays", "default",
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product",
               "operator":"In","values":["Tesla-T4"]}],"matchFields":[{"key":"metadata.name",
               "operator":"In","values":["n1"]}]}])") +
               ","),
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[],"matchFields":[{"key":
               "metadata.name","operator":"In","values":["n1"]}]}])") +
               ",")},
          {"Exists on a pool label selects the pools", "default",
           pod(R"("affinity":{"podAffinity":{"x":1},"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
               {"nodeSelectorTerms":[{"matchExpressions":[{"key":"cloud.example.com/pool",
               "operator":"Exists"}]}]}}},)"),
           pod(R"("affinity":{"podAffinity":{"x":1}},)")},
          {"when no term is left the empty affinity goes too", "default",
           pod(R"("affinity":)" + required(R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product",
               "operator":"In","values":["Tesla-T4"]}]}])") +
               ","),
           pod("")},
          {"NotIn and preferred affinity do not put a pod on a pool", "default",
           pod(R"("affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":
               [{"weight":1,"preference":{"matchExpressions":[{"key":"nvidia.com/gpu.product",
               "operator":"In","values":["Tesla-T4"]}]}}],"requiredDuringSchedulingIgnoredDuringExecution":
               {"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product",
               "operator":"NotIn","values":["Tesla-T4"]}]}]}}},)"),
           ""},
          {"GPU pods are never stripped", "ml-a",
           pod(R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],)",
               R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}])"),
           ""},
          {"DaemonSets in a nodeAgents namespace are excepted (node agents run everywhere)",
           "node-agents",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":
               {"template":{"spec":{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],
               "containers":[{"name":"c"}]}}}})",
           ""},
          {"a DaemonSet elsewhere is stripped like any workload", "default",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":
               {"template":{"spec":{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],
               "containers":[{"name":"c"}]}}}})",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":
               {"template":{"spec":{"tolerations":[],"containers":[{"name":"c"}]}}}})"},
          {"a Deployment template is stripped", "default",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
               {"template":{"spec":{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],
               "containers":[{"name":"c"}]}}}})",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
               {"template":{"spec":{"tolerations":[],"containers":[{"name":"c"}]}}}})"},
      });
  run_mutation_cases(
      *mutator, policy,
      {{"a Pod owned by a DaemonSet is excepted in a nodeAgents namespace", "node-agents",
        pod(R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],)"), ""},
       {"a Pod owned by a DaemonSet elsewhere is stripped", "default",
        pod(R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],)"),
        pod(R"("tolerations":[],)")}},
      [](RequestContext& request) { request.daemonset_owned = true; });
}

TEST_CASE("mutator strip-gpu-pool: only with nonGpuOnGpuPool: strip",
          "[mutators][strip-gpu-pool]") {
  auto mutator = make_strip_gpu_pool_mutator();
  for (const char* mode : {"deny", "warn", "off"}) {
    INFO(mode);
    run_mutation_cases(
        *mutator, policy_from_yaml(fleet_policy("fix", mode)),
        {{"nothing is removed", "default",
          pod(R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],)"), ""}});
  }
}

}  // namespace
}  // namespace strip_gpu_pool_test
}  // namespace gpuadmit::testing
