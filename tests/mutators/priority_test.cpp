#include "mutators/priority.h"

#include "tests/mutators/mutator_test_util.h"
#include "tests/support/priority_classes.h"

namespace gpuadmit::testing {
namespace priority_test {
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

// With the cluster's PriorityClasses watched (`serve --cluster-priority-classes`): the class as the
// cluster has it, never a class it does not have, and its globalDefault class counted as unset.
// The cluster here recreated gpu-batch at 1500 (PreemptLowerPriority), has gpu-training as
// declared, no gpu-inference, and its own globalDefault class "standard" the policy does not
// declare; the policy's "cluster-default" exists but is not the cluster's default.
TEST_CASE("mutator priority: the cluster's classes when they are known", "[mutators][priority]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_priority_mutator();
  const FakePriorityClasses cluster({{"gpu-batch", 1500, "PreemptLowerPriority", false},
                                     {"gpu-training", 10000, "PreemptLowerPriority", false},
                                     {"cluster-default", 0, "PreemptLowerPriority", false},
                                     {"standard", 100, "Never", true}});
  const std::string from_cluster =
      R"(,"priorityClassName":"gpu-batch","priority":1500,"preemptionPolicy":"PreemptLowerPriority")";
  run_mutation_cases(
      *mutator, policy,
      {
          {"the cluster's value and preemptionPolicy, not the policy's 1000 and Never", "ml-a",
           pod("{}"), pod("{}", "", from_cluster)},
          {"the cluster's globalDefault class, not in the policy, counts as unset (the plugin's "
           "first pass put it and its value there)",
           "ml-a",
           pod("{}", R"("priorityClassName":"standard","priority":100,)"
                     R"("preemptionPolicy":"Never",)"),
           pod("{}", R"("priorityClassName":"gpu-batch","priority":1500,)"
                     R"("preemptionPolicy":"PreemptLowerPriority",)")},
          {"the policy's globalDefault class is not the cluster's: a choice, left alone", "ml-a",
           pod("{}", R"("priorityClassName":"cluster-default",)"), ""},
          {"a class the cluster does not have is never written: the pod is left as it is", "web-a",
           pod("{}"), ""},
          {"byWorkload, as the cluster has it", "ml-a",
           pod(R"({"gpuadmit.io/workload":"training"})"),
           pod(R"({"gpuadmit.io/workload":"training"})", "",
               R"(,"priorityClassName":"gpu-training","priority":10000,)"
               R"("preemptionPolicy":"PreemptLowerPriority")")},
          {"a template whose class (gpu-inference) the cluster does not have: unchanged", "ml-a",
           deployment("", ""), ""},
          {"a template naming the cluster's globalDefault class, replaced", "ml-b",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
              {"template":{"metadata":{"labels":{"gpuadmit.io/workload":"training"}},"spec":{
              "priorityClassName":"standard",)" +
               std::string(kContainers) + "}}}}",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":
              {"template":{"metadata":{"labels":{"gpuadmit.io/workload":"training"}},"spec":{
              "priorityClassName":"gpu-training",)" +
               std::string(kContainers) + "}}}}"},
      },
      [&](RequestContext& request) { request.priority_classes = &cluster; });
}

TEST_CASE("mutator priority: watched but not read yet, nothing is written",
          "[mutators][priority]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_priority_mutator();
  const FakePriorityClasses not_synced({{"gpu-batch", 1000, "Never", false}}, false);
  run_mutation_cases(*mutator, policy, {{"none yet", "ml-a", pod("{}"), ""}},
                     [&](RequestContext& request) { request.priority_classes = &not_synced; });
}

}  // namespace
}  // namespace priority_test
}  // namespace gpuadmit::testing
