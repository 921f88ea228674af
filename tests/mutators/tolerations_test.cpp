#include "mutators/tolerations.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace tolerations_test {
namespace {

// A GPU pod of class `cls` with `tolerations` (JSON list, or "" for none).
std::string pod(const std::string& cls, const std::string& tolerations) {
  std::string spec = R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}])";
  if (!tolerations.empty()) spec += R"(,"tolerations":)" + tolerations;
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
      {"gpuadmit.io/class":")" +
         cls + R"("}},"spec":)" + spec + "}}";
}

constexpr std::string_view kA100Tolerations =
    R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
       {"key":"pool.example.com/a100","operator":"Equal","value":"true","effect":"NoSchedule"})";

TEST_CASE("mutator tolerations: one per class taint unless already tolerated",
          "[mutators][tolerations]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_tolerations_mutator();
  CHECK(mutator->name() == "tolerations");
  const std::string a100 = "[" + std::string(kA100Tolerations) + "]";
  run_mutation_cases(
      *mutator, policy,
      {
          {"none yet: Exists for a taint without value, Equal with the value", "ml-a",
           pod("a100", ""), pod("a100", a100)},
          {"null tolerations are replaced", "ml-a", pod("a100", "null"), pod("a100", a100)},
          {"a taint with a value (t4)", "ml-a", pod("t4", "[]"),
           pod("t4", R"([{"key":"nvidia.com/gpu","operator":"Equal","value":"present",
                         "effect":"NoSchedule"}])")},
          {"a PreferNoSchedule taint is tolerated too", "ml-a", pod("v100", ""),
           pod("v100", R"([{"key":"pool.example.com/v100","operator":"Exists",
                           "effect":"PreferNoSchedule"}])")},
          {"the key-less wildcard tolerates every taint: nothing added", "ml-a",
           pod("a100", R"([{"operator":"Exists"}])"), ""},
          {"the wildcard restricted to another effect does not count", "ml-a",
           pod("t4", R"([{"operator":"Exists","effect":"NoExecute"}])"),
           pod("t4", R"([{"operator":"Exists","effect":"NoExecute"},{"key":"nvidia.com/gpu",
                         "operator":"Equal","value":"present","effect":"NoSchedule"}])")},
          {"an empty effect tolerates every effect; only the other taint is added", "ml-a",
           pod("a100", R"([{"key":"nvidia.com/gpu","operator":"Exists"}])"),
           pod("a100", R"([{"key":"nvidia.com/gpu","operator":"Exists"},
                           {"key":"pool.example.com/a100","operator":"Equal","value":"true",
                            "effect":"NoSchedule"}])")},
          {"an omitted operator means Equal", "ml-a",
           pod("a100", R"([{"key":"pool.example.com/a100","value":"true"}])"),
           pod("a100", R"([{"key":"pool.example.com/a100","value":"true"},
                           {"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])")},
          {"Equal with another value or Exists with another effect does not count", "ml-a",
           pod("t4", R"([{"key":"nvidia.com/gpu","operator":"Equal","value":"absent",
                          "effect":"NoSchedule"},
                         {"key":"nvidia.com/gpu","operator":"Exists","effect":"NoExecute"}])"),
           pod("t4", R"([{"key":"nvidia.com/gpu","operator":"Equal","value":"absent",
                          "effect":"NoSchedule"},
                         {"key":"nvidia.com/gpu","operator":"Exists","effect":"NoExecute"},
                         {"key":"nvidia.com/gpu","operator":"Equal","value":"present",
                          "effect":"NoSchedule"}])")},
          {"Exists on the key tolerates a taint with a value", "ml-a",
           pod("t4", R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])"),
           ""},
          {"the user's tolerations keep their order and fields (tolerationSeconds)", "ml-a",
           pod("a100", R"([{"key":"spot","operator":"Exists","effect":"NoExecute",
                            "tolerationSeconds":30}])"),
           pod("a100", R"([{"key":"spot","operator":"Exists","effect":"NoExecute",
                            "tolerationSeconds":30},)" +
                           std::string(kA100Tolerations) + "]")},
          {"an unknown class (GPU004) gets nothing", "ml-a", pod("h200", ""), ""},
          {"a non-GPU pod gets nothing", "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
               {"gpuadmit.io/class":"a100"}},"spec":{"containers":[{"name":"c"}]}})",
           ""},
      });
}

TEST_CASE("mutator tolerations: a class listing a taint twice gets one toleration",
          "[mutators][tolerations]") {
  std::string yaml = fleet_policy();
  const std::string taints = "        - {key: pool.example.com/v100, effect: PreferNoSchedule}\n";
  yaml.insert(yaml.find(taints) + taints.size(), taints);
  run_mutation_cases(*make_tolerations_mutator(), policy_from_yaml(yaml),
                     {{"duplicate taints", "ml-a", pod("v100", ""),
                       pod("v100", R"([{"key":"pool.example.com/v100","operator":"Exists",
                                       "effect":"PreferNoSchedule"}])")}});
}

}  // namespace
}  // namespace tolerations_test
}  // namespace gpuadmit::testing
