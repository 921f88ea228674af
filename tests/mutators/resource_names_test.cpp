#include "mutators/resource_names.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace resource_names_test {
namespace {

std::string pod(const std::string& annotations, const std::string& containers) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" + annotations +
         R"(},"spec":{"containers":)" + containers + "}}";
}

TEST_CASE("mutator resource-names: MIG mixed and time-slicing names",
          "[mutators][resource-names]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_resource_names_mutator();
  CHECK(mutator->name() == "resource-names");
  const std::string whole =
      R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":2,"memory":"1Gi"},
          "requests":{"cpu":"1","nvidia.com/gpu":"2"}}}])";
  run_mutation_cases(
      *mutator, policy,
      {
          {"MIG mixed: nvidia.com/gpu becomes nvidia.com/mig-<profile>, values untouched", "ml-a",
           pod(R"({"gpuadmit.io/mig-profile":"3g.40gb"})", whole),
           pod(R"({"gpuadmit.io/mig-profile":"3g.40gb"})",
               R"([{"name":"c","resources":{"limits":{"memory":"1Gi","nvidia.com/mig-3g.40gb":2},
                   "requests":{"cpu":"1","nvidia.com/mig-3g.40gb":"2"}}}])")},
          {"MIG mixed +me profile: the device plugin's .me name", "ml-a",
           pod(R"({"gpuadmit.io/mig-profile":"1g.10gb+me"})",
               R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}])"),
           pod(R"({"gpuadmit.io/mig-profile":"1g.10gb+me"})",
               R"([{"name":"c","resources":{"limits":{"nvidia.com/mig-1g.10gb.me":1}}}])")},
          {"MIG single: the resource stays nvidia.com/gpu", "ml-a",
           pod(R"({"gpuadmit.io/class":"h100","gpuadmit.io/mig-profile":"1g.10gb"})", whole), ""},
          {"a profile the class does not offer (GPU007) is not renamed", "ml-a",
           pod(R"({"gpuadmit.io/mig-profile":"2g.20gb"})", whole), ""},
          {"a profile on a class without MIG (GPU007) is not renamed either", "ml-a",
           pod(R"({"gpuadmit.io/class":"l4","gpuadmit.io/mig-profile":"1g.10gb"})", whole), ""},
          {"time-slicing with renameByDefault: nvidia.com/gpu.shared", "ml-a",
           pod(R"({"gpuadmit.io/class":"l4"})", whole),
           pod(R"({"gpuadmit.io/class":"l4"})",
               R"([{"name":"c","resources":{"limits":{"memory":"1Gi","nvidia.com/gpu.shared":2},
                   "requests":{"cpu":"1","nvidia.com/gpu.shared":"2"}}}])")},
          {"time-slicing without renameByDefault keeps nvidia.com/gpu", "ml-a",
           pod(R"({"gpuadmit.io/class":"v100"})", whole), ""},
          {"a plain class keeps nvidia.com/gpu", "ml-a",
           pod(R"({"gpuadmit.io/class":"t4"})", whole), ""},
          {"every container and init container; other GPU names are not touched", "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
               {"gpuadmit.io/class":"l4"}},"spec":{"initContainers":[{"name":"i","resources":
               {"limits":{"nvidia.com/gpu":1}}}],"containers":[{"name":"a","resources":
               {"limits":{"nvidia.com/gpu":1}}},{"name":"b","resources":{"limits":
               {"nvidia.com/mig-1g.10gb":1}}},{"name":"c"}]}})",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
               {"gpuadmit.io/class":"l4"}},"spec":{"initContainers":[{"name":"i","resources":
               {"limits":{"nvidia.com/gpu.shared":1}}}],"containers":[{"name":"a","resources":
               {"limits":{"nvidia.com/gpu.shared":1}}},{"name":"b","resources":{"limits":
               {"nvidia.com/mig-1g.10gb":1}}},{"name":"c"}]}})"},
          {"a container that already names the target too is left for the rules", "ml-a",
           pod(R"({"gpuadmit.io/class":"l4"})",
               R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":1,
                   "nvidia.com/gpu.shared":1}}}])"),
           ""},
          {"an unparsable value (GPU002) is not renamed", "ml-a",
           pod(R"({"gpuadmit.io/class":"l4"})",
               R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":"x"},
                   "requests":{"nvidia.com/gpu":1}}}])"),
           ""},
          {"a Deployment template", "ml-a",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
               {"template":{"metadata":{"annotations":{"gpuadmit.io/mig-profile":"1g.10gb"}},
               "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}}}})",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
               {"template":{"metadata":{"annotations":{"gpuadmit.io/mig-profile":"1g.10gb"}},
               "spec":{"containers":[{"name":"c","resources":{"limits":
               {"nvidia.com/mig-1g.10gb":1}}}]}}}})"},
      });
}

}  // namespace
}  // namespace resource_names_test
}  // namespace gpuadmit::testing
