#include "rules/gpu_count_limits.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace gpu_count_limits_test {
namespace {

std::string gpus(std::string_view name, int n, std::string_view extra = "") {
  const std::string q = "{\"nvidia.com/gpu\":\"" + std::to_string(n) + "\"}";
  return container(name, q, q, extra);
}

TEST_CASE("rule GPU005: maxGPUsPerContainer and maxGPUsPerPod", "[rules][GPU005]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_gpu_count_limits_rule();
  REQUIRE(rule->id() == "GPU005");
  const std::string kSidecar = R"("restartPolicy":"Always")";
  run_cases(
      *rule, policy,
      {
          {"within both limits", "ml-a", make_pod(gpus("a", 4) + "," + gpus("b", 2)), {}},
          {"a container over maxGPUsPerContainer",
           "ml-a",
           make_pod(gpus("trainer", 5)),
           {"spec.containers[0].resources | container trainer: 5 GPUs (nvidia.com/gpu 5) exceed "
            "maxGPUsPerContainer 4 of tenant ml-team; request at most 4 per container"}},
          {"a pod over maxGPUsPerPod",
           "ml-a",
           make_pod(gpus("a", 4) + "," + gpus("b", 3)),
           {"spec | pod requests 7 GPUs (container a: 4, container b: 3), more than "
            "maxGPUsPerPod 6 of tenant ml-team; request at most 6 per pod, or split the work "
            "across pods"}},
          {"both, reported together",
           "ml-a",
           make_pod(gpus("a", 8)),
           {"spec.containers[0].resources | container a: 8 GPUs (nvidia.com/gpu 8) exceed "
            "maxGPUsPerContainer 4 of tenant ml-team; request at most 4 per container",
            "spec | pod requests 8 GPUs (container a: 8), more than maxGPUsPerPod 6 of tenant "
            "ml-team; request at most 6 per pod, or split the work across pods"}},
          {"init containers run one at a time: they do not add up",
           "ml-a",
           make_pod(gpus("app", 4),
                    "\"initContainers\":[" + gpus("i1", 4) + "," + gpus("i2", 4) + "]"),
           {}},
          {"an init container larger than the app containers sets the pod total",
           "ml-a",
           make_pod(gpus("app", 1) + "," + gpus("app2", 1),
                    "\"initContainers\":[" + gpus("warmup", 4) + "]"),
           {}},
          {"restartable sidecars add to the app containers and to later init containers",
           "ml-a",
           make_pod(gpus("app", 1), "\"initContainers\":[" + gpus("proxy", 3, kSidecar) + "," +
                                        gpus("load", 4) + "]"),
           {"spec | pod requests 7 GPUs (init container proxy: 3, init container load: 4), more "
            "than maxGPUsPerPod 6 of tenant ml-team; request at most 6 per pod, or split the "
            "work across pods"}},
          {"init vs app containers per resource (PodRequests): whole GPUs and MIG slices add up",
           "ml-a",
           make_pod(container("a", R"({"nvidia.com/mig-1g.10gb":"3"})",
                              R"({"nvidia.com/mig-1g.10gb":"3"})"),
                    "\"initContainers\":[" + gpus("warmup", 4) + "]"),
           {"spec | pod requests 7 GPUs (init container warmup: 4, container a: 3), more than "
            "maxGPUsPerPod 6 of tenant ml-team; request at most 6 per pod, or split the work "
            "across pods"}},
          {"zero is not a GPU request",
           "ml-a",
           make_pod(gpus("a", 4) + "," + gpus("b", 0) + "," + gpus("c", 2)),
           {}},
          {"MIG and shared units count as GPUs",
           "ml-a",
           make_pod(container("a", R"({"nvidia.com/mig-1g.10gb":"3","nvidia.com/gpu.shared":"2"})",
                              R"({"nvidia.com/mig-1g.10gb":"3","nvidia.com/gpu.shared":"2"})")),
           {"spec.containers[0].resources | container a: 5 GPUs (nvidia.com/mig-1g.10gb 3, "
            "nvidia.com/gpu.shared 2) exceed maxGPUsPerContainer 4 of tenant ml-team; request at "
            "most 4 per container"}},
          {"a tenant without limits", "open", make_pod(gpus("a", 64)), {}},
          {"a namespace of no tenant", "default", make_pod(gpus("a", 64)), {}},
      });
}

}  // namespace
}  // namespace gpu_count_limits_test
}  // namespace gpuadmit::testing
