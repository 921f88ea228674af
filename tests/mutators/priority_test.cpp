#include "mutators/priority.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace {

constexpr std::string_view kContainers =
    R"("containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}])";

// Fields the user wrote come before the containers (`spec_prefix`, ends with ","); fields the
// mutation adds land after them (`spec_suffix`, starts with ","), where a JSON Patch "add" puts
// them.
std::string pod(const std::string& annotations, const std::string& spec_prefix = "",
                const std::string& spec_suffix = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" + annotations +
         R"(},"spec":{)" + spec_prefix + std::string(kContainers) + spec_suffix + "}}";
}

std::string deployment(const std::string& spec_prefix, const std::string& spec_suffix = "") {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
      {"template":{"metadata":{"labels":{"gpuadmit.io/workload":"inference"}},"spec":{)" +
         spec_prefix + std::string(kContainers) + spec_suffix + "}}}}";
}

TEST_CASE("mutator priority: the tenant's class, consistent on Pods, name only on templates",
          "[mutators][priority]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_priority_mutator();
  CHECK(mutator->name() == "priority");
  const std::string batch =
      R"("priorityClassName":"gpu-batch","priority":1000,"preemptionPolicy":"Never",)";
  const std::string added_batch = "," + batch.substr(0, batch.size() - 1);
  const std::string added_training = R"(,"priorityClassName":"gpu-training","priority":10000,)"
                                     R"("preemptionPolicy":"PreemptLowerPriority")";
  run_mutation_cases(
      *mutator, policy,
      {
          {"none: the default class, with its value and preemptionPolicy", "ml-a", pod("{}"),
           pod("{}", "", added_batch)},
          {"the workload type picks byWorkload (default preemptionPolicy)", "ml-a",
           pod(R"({"gpuadmit.io/workload":"training"})"),
           pod(R"({"gpuadmit.io/workload":"training"})", "", added_training)},
          {"an unknown workload type falls back to the default", "ml-a",
           pod(R"({"gpuadmit.io/workload":"interactive"})"),
           pod(R"({"gpuadmit.io/workload":"interactive"})", "", added_batch)},
          {"the globalDefault class (set by the Priority plugin) counts as unset", "ml-a",
           pod("{}", R"("priorityClassName":"cluster-default","priority":0,)"
                     R"("preemptionPolicy":"PreemptLowerPriority",)"),
           pod("{}", batch)},
          {"an empty priorityClassName counts as unset; a stale priority is overwritten", "ml-a",
           pod("{}", R"("priorityClassName":"","priority":5,)"),
           pod("{}", R"("priorityClassName":"gpu-batch","priority":1000,)",
               R"(,"preemptionPolicy":"Never")")},
          {"an explicit class is the user's choice, even with a workload type", "ml-a",
           pod(R"({"gpuadmit.io/workload":"training"})", R"("priorityClassName":"gpu-inference",)"),
           ""},
          {"a class the policy does not declare is left alone too", "ml-a",
           pod("{}", R"("priorityClassName":"system-cluster-critical",)"), ""},
          {"a template gets the name only", "ml-a", deployment(""),
           deployment("", R"(,"priorityClassName":"gpu-inference")")},
          {"a template naming the globalDefault class: the name is replaced", "ml-a",
           deployment(R"("priorityClassName":"cluster-default",)"),
           deployment(R"("priorityClassName":"gpu-inference",)")},
          {"another tenant's default", "web-a", pod("{}"),
           pod("{}", "",
               R"(,"priorityClassName":"gpu-inference","priority":100000,)"
               R"("preemptionPolicy":"PreemptLowerPriority")")},
          {"a tenant without priority settings", "bare", pod("{}"), ""},
          {"no tenant", "default", pod("{}"), ""},
          {"a non-GPU pod", "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}})",
           ""},
      });
}

}  // namespace
}  // namespace gpuadmit::testing
