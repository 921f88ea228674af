#include "mutators/requests_equal_limits.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace requests_equal_limits_test {
namespace {

std::string pod(const std::string& spec) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec + "}";
}

TEST_CASE("mutator requests-equal-limits: fills the missing half of GPU pairs",
          "[mutators][requests-equal-limits]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_requests_equal_limits_mutator();
  CHECK(mutator->name() == "requests-equal-limits");
  run_mutation_cases(
      *mutator, policy,
      {
          {"a limit without a request: the request copies the JSON value (a number)", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1},
               "requests":{"nvidia.com/gpu":1}}}]})")},
          {"a request without a limit: the limit copies the JSON value (a string)", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"2"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"2"},
               "limits":{"nvidia.com/gpu":"2"}}}]})")},
          {"the spelling is kept: 2000m stays 2000m", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2000m"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2000m"},
               "requests":{"nvidia.com/gpu":"2000m"}}}]})")},
          {"equal pairs are left alone", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"1"},
               "limits":{"nvidia.com/gpu":1}}}]})"),
           ""},
          {"differing values are GPU001, never changed", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1},
               "limits":{"nvidia.com/gpu":2}}}]})"),
           ""},
          {"an unparsable value is GPU002, never copied", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"abc"}}},
               {"name":"d","resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"abc"}}},
               {"name":"d","resources":{"limits":{"nvidia.com/gpu":1},
               "requests":{"nvidia.com/gpu":1}}}]})")},
          {"only GPU resources: cpu and memory pairs are not ours", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"cpu":"2","nvidia.com/gpu":1},
               "requests":{"memory":"1Gi"}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"cpu":"2","nvidia.com/gpu":1},
               "requests":{"memory":"1Gi","nvidia.com/gpu":1}}}]})")},
          {"every GPU resource name: shared, MIG and the policy's gpuResources", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu.shared":1,
               "nvidia.com/mig-1g.10gb":2},"requests":{"amd.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu.shared":1,
               "nvidia.com/mig-1g.10gb":2,"amd.com/gpu":1},"requests":{"amd.com/gpu":1,
               "nvidia.com/gpu.shared":1,"nvidia.com/mig-1g.10gb":2}}}]})")},
          {"init containers and sidecars too; ephemeral containers may not have resources", "ml-a",
           pod(R"({"initContainers":[{"name":"i","resources":{"limits":{"nvidia.com/gpu":1}}},
               {"name":"s","restartPolicy":"Always","resources":{"requests":{"nvidia.com/gpu":1}}}],
               "containers":[{"name":"c"}],
               "ephemeralContainers":[{"name":"e","resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"initContainers":[{"name":"i","resources":{"limits":{"nvidia.com/gpu":1},
               "requests":{"nvidia.com/gpu":1}}},
               {"name":"s","restartPolicy":"Always","resources":{"requests":{"nvidia.com/gpu":1},
               "limits":{"nvidia.com/gpu":1}}}],
               "containers":[{"name":"c"}],
               "ephemeralContainers":[{"name":"e","resources":{"limits":{"nvidia.com/gpu":1}}}]})")},
          {"a null request counts as absent", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":null},
               "limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1},
               "limits":{"nvidia.com/gpu":1}}}]})")},
          {"null requests map counts as absent", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"requests":null,
               "limits":{"nvidia.com/gpu":1}}}]})"),
           pod(R"({"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1},
               "limits":{"nvidia.com/gpu":1}}}]})")},
          {"a non-GPU pod (nvidia.com/gpu: 0 is no GPU request) is untouched", "ml-a",
           pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"0"}}}]})"),
           ""},
          {"a pod template", "ml-a",
           R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":
               {"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":4}}}]}}}})",
           R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":
               {"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":4},
               "requests":{"nvidia.com/gpu":4}}}]}}}})"},
      });
}

TEST_CASE("mutator requests-equal-limits: only with requestsEqualLimits: fix",
          "[mutators][requests-equal-limits]") {
  auto mutator = make_requests_equal_limits_mutator();
  for (const char* mode : {"deny", "warn"}) {
    INFO(mode);
    run_mutation_cases(
        *mutator, policy_from_yaml(fleet_policy(mode)),
        {{"nothing is filled in", "ml-a",
          pod(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]})"),
          ""}});
  }
}

}  // namespace
}  // namespace requests_equal_limits_test
}  // namespace gpuadmit::testing
