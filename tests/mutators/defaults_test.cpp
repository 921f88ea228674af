#include "mutators/defaults.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace defaults_test {
namespace {

std::string pod(const std::string& spec) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec + "}";
}

// ml tenant: request {cpu: 4, memory: 16Gi}, limit {memory: 64Gi}, perGPU {cpu: 8, memory: 48Gi}.
TEST_CASE("mutator defaults: LimitRanger semantics with perGPU", "[mutators][defaults]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_defaults_mutator();
  CHECK(mutator->name() == "defaults");
  run_mutation_cases(
      *mutator, policy,
      {
          {"perGPU x 1; the default limit; requests never above the limit", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
               "memory":"64Gi"},"requests":{"cpu":"8","memory":"48Gi"}}}]})")},
          {"perGPU x 2 (canonical strings), capped at the limit: the limit's value is copied",
           "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2",
               "memory":"64Gi"},"requests":{"cpu":"16","memory":"64Gi"}}}]})")},
          {"a user limit above perGPU x N is kept and not reached", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":2,
               "memory":"128Gi"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":2,
               "memory":"128Gi"},"requests":{"cpu":"16","memory":"96Gi"}}}]})")},
          {"a user limit below the default request caps it, copied as written", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
               "cpu":2.5,"memory":"40Gi"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
               "cpu":2.5,"memory":"40Gi"},"requests":{"cpu":2.5,"memory":"40Gi"}}}]})")},
          {"values the user set are never changed", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1,
               "cpu":"1","memory":"8Gi"},"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1,
               "cpu":"1","memory":"8Gi"},"limits":{"nvidia.com/gpu":1,"memory":"64Gi"}}}]})")},
          {"no default limit below the user's own request (the API would reject the pod)", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"memory":"100Gi"},
               "limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"memory":"100Gi",
               "cpu":"8"},"limits":{"nvidia.com/gpu":1}}}]})")},
          {"containers without GPUs (init, sidecar, app) get the plain request", "ml-a",
           pod(R"({"initContainers":[{"name":"i"}],"containers":[{"name":"c","resources":
               {"limits":{"nvidia.com/gpu":1}}},{"name":"log","resources":null}],
               "ephemeralContainers":[{"name":"e"}]})"),
           pod(R"({"initContainers":[{"name":"i","resources":{"limits":{"memory":"64Gi"},
               "requests":{"cpu":"4","memory":"16Gi"}}}],"containers":[{"name":"c","resources":
               {"limits":{"nvidia.com/gpu":1,"memory":"64Gi"},"requests":{"cpu":"8",
               "memory":"48Gi"}}},{"name":"log","resources":{"limits":{"memory":"64Gi"},
               "requests":{"cpu":"4","memory":"16Gi"}}}],"ephemeralContainers":[{"name":"e"}]})")},
          {"MIG slices and shared GPUs count as GPU units", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/mig-1g.10gb":1,
               "memory":"1Ti"}}},{"name":"d","resources":{"limits":{"nvidia.com/gpu.shared":1,
               "memory":"1Ti"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/mig-1g.10gb":1,
               "memory":"1Ti"},"requests":{"cpu":"8","memory":"48Gi"}}},{"name":"d","resources":
               {"limits":{"nvidia.com/gpu.shared":1,"memory":"1Ti"},"requests":{"cpu":"8",
               "memory":"48Gi"}}}]})")},
          {"an unparsable user limit leaves that resource alone", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
               "memory":"lots"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
               "memory":"lots"},"requests":{"cpu":"8"}}}]})")},
          {"a non-GPU pod gets no defaults", "ml-a", pod(R"({"containers":[{"name":"c"}]})"), ""},
          {"a tenant without defaults", "web-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]})"), ""},
          {"a namespace without tenant", "default",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]})"), ""},
      });
}

TEST_CASE("mutator defaults: without a default request the request falls back to the limit",
          "[mutators][defaults]") {
  std::string yaml = fleet_policy();
  const std::string from = R"(        request: {cpu: "4", memory: 16Gi}
        limit: {memory: 64Gi}
        perGPU: {cpu: "8", memory: 48Gi})";
  const std::string to = R"(        limit: {memory: 32Gi, ephemeral-storage: 20Gi}
        perGPU: {cpu: "6"})";
  yaml.replace(yaml.find(from), from.size(), to);
  run_mutation_cases(
      *make_defaults_mutator(), policy_from_yaml(yaml),
      {{"the default limit or the user's limit becomes the request; no cpu without a source",
        "ml-a", pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}},
            {"name":"m","resources":{"limits":{"memory":2147483648}}}]})"),
        pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
            "memory":"32Gi","ephemeral-storage":"20Gi"},"requests":{"cpu":"6","memory":"32Gi",
            "ephemeral-storage":"20Gi"}}},{"name":"m","resources":{"limits":{"memory":2147483648,
            "ephemeral-storage":"20Gi"},"requests":{"memory":2147483648,
            "ephemeral-storage":"20Gi"}}}]})")}});
}

// Pod-level resources (KEP-2837): the API server requires, for every resource spec.resources
// sets, the containers' aggregate request ≤ the pod-level request and each container's limit ≤
// the pod-level limit (validation.go validatePodResourceConsistency). Such a resource is the
// user's budget for the whole pod: no container gets a default for it; the others still do.
TEST_CASE("mutator defaults: resources budgeted at pod level are left alone",
          "[mutators][defaults]") {
  auto policy = policy_from_yaml(fleet_policy());
  run_mutation_cases(
      *make_defaults_mutator(), policy,
      {
          {"pod-level cpu and memory requests and limits: no cpu or memory default", "ml-a",
           pod(R"({"resources":{"requests":{"cpu":"2","memory":"8Gi"},"limits":{"cpu":"4",
               "memory":"16Gi"}},"containers":[{"name":"c","resources":{"limits":
               {"nvidia.com/gpu":1}}}]})"),
           ""},
          {"pod-level cpu request only: memory still defaulted, cpu not", "ml-a",
           pod(R"({"resources":{"requests":{"cpu":"2"}},"initContainers":[{"name":"i"}],
               "containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"resources":{"requests":{"cpu":"2"}},"initContainers":[{"name":"i",
               "resources":{"limits":{"memory":"64Gi"},"requests":{"memory":"16Gi"}}}],
               "containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
               "memory":"64Gi"},"requests":{"memory":"48Gi"}}}]})")},
          {"pod-level memory limit only (request defaulted from it later): no memory default",
           "ml-a", pod(R"({"resources":{"limits":{"memory":"16Gi"}},"containers":[{"name":"c",
               "resources":{"limits":{"nvidia.com/gpu":2}}}]})"),
           pod(R"({"resources":{"limits":{"memory":"16Gi"}},"containers":[{"name":"c",
               "resources":{"limits":{"nvidia.com/gpu":2},"requests":{"cpu":"16"}}}]})")},
          {"a null pod-level value budgets nothing; empty spec.resources neither", "ml-a",
           pod(R"({"resources":{"requests":{"cpu":null},"limits":{}},"containers":[{"name":"c",
               "resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"resources":{"requests":{"cpu":null},"limits":{}},"containers":[{"name":"c",
               "resources":{"limits":{"nvidia.com/gpu":1,"memory":"64Gi"},"requests":
               {"cpu":"8","memory":"48Gi"}}}]})")},
          {"pod-level hugepages budget only that resource", "ml-a",
           pod(R"({"resources":{"limits":{"hugepages-2Mi":"1Gi"}},"containers":[{"name":"c",
               "resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"resources":{"limits":{"hugepages-2Mi":"1Gi"}},"containers":[{"name":"c",
               "resources":{"limits":{"nvidia.com/gpu":1,"memory":"64Gi"},"requests":
               {"cpu":"8","memory":"48Gi"}}}]})")},
      });
}

}  // namespace
}  // namespace defaults_test
}  // namespace gpuadmit::testing
