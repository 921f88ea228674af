#include "rules/allowed_priority_class.h"

#include "tests/rules/rule_test_util.h"
#include "tests/support/priority_classes.h"

namespace gpuadmit::testing {
namespace allowed_priority_class_test {
namespace {

std::string gpu_pod(std::string_view priority_class) {
  return make_pod(container("t", R"({"nvidia.com/gpu":"1"})"),
                  "\"priorityClassName\":\"" + std::string(priority_class) + "\"");
}

TEST_CASE("rule GPU010: priorityClassName must be allowed for the tenant", "[rules][GPU010]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_allowed_priority_class_rule();
  REQUIRE(rule->id() == "GPU010");
  run_cases(
      *rule, policy,
      {
          {"an allowed class passes", "ml-a", gpu_pod("gpu-training"), {}},
          {"a class outside the list",
           "ml-a",
           gpu_pod("gpu-inference"),
           {"spec.priorityClassName | priorityClassName gpu-inference is not allowed for tenant "
            "ml-team; use one of: gpu-batch, gpu-training"}},
          {"a class the policy does not declare",
           "ml-a",
           gpu_pod("system-node-critical"),
           {"spec.priorityClassName | priorityClassName system-node-critical is not allowed for "
            "tenant ml-team; use one of: gpu-batch, gpu-training"}},
          {"the globalDefault class counts as unset", "ml-a", gpu_pod("cluster-default"), {}},
          {"no priorityClassName",
           "ml-a",
           make_pod(container("t", R"({"nvidia.com/gpu":"1"})")),
           {}},
          {"non-GPU pods are not checked",
           "ml-a",
           make_pod(container("web", R"({"cpu":"1"})"), R"("priorityClassName":"gpu-inference")"),
           {}},
          {"a tenant without priority.allowed", "open", gpu_pod("gpu-inference"), {}},
          {"a namespace of no tenant", "default", gpu_pod("gpu-inference"), {}},
          {"templates",
           "ml-a",
           make_deployment(container("t", R"({"nvidia.com/gpu":"1"})"),
                           R"("priorityClassName":"gpu-inference")"),
           {"spec.template.spec.priorityClassName | priorityClassName gpu-inference is not "
            "allowed for tenant ml-team; use one of: gpu-batch, gpu-training"}},
      });
}

// Kueue's WorkloadPriorityClass label, read where Kueue reads the queue: a Job's own labels, a
// Pod's own, each template's for a kind Kueue does not integrate.
TEST_CASE("rule GPU010: the Kueue WorkloadPriorityClass label must be allowed too",
          "[rules][GPU010]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_allowed_priority_class_rule();
  const std::string gpu = container("t", R"({"nvidia.com/gpu":"1"})");
  auto job = [&](std::string_view label) {
    return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","labels":)"
           R"({"kueue.x-k8s.io/priority-class":")" +
           std::string(label) + R"("}},"spec":{"template":{"spec":{"containers":[)" + gpu + "]}}}}";
  };
  auto pod = [&](std::string_view label) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":)"
           R"({"kueue.x-k8s.io/priority-class":")" +
           std::string(label) + R"("}},"spec":{"containers":[)" + gpu + "]}}";
  };
  const std::string replica_set =
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"template":)"
      R"({"metadata":{"labels":{"kueue.x-k8s.io/priority-class":"top"}},"spec":{"containers":[)" +
      gpu + "]}}}}";
  run_cases(
      *rule, policy,
      {
          {"an allowed class on a Job", "ml-a", job("gpu-training"), {}},
          {"a class outside the list on a Job",
           "ml-a",
           job("platform-critical"),
           {"metadata.labels[\"kueue.x-k8s.io/priority-class\"] | Kueue WorkloadPriorityClass "
            "platform-critical (label kueue.x-k8s.io/priority-class) is not allowed for tenant "
            "ml-team; use one of: gpu-batch, gpu-training"}},
          {"on a Pod",
           "ml-a",
           pod("top"),
           {"metadata.labels[\"kueue.x-k8s.io/priority-class\"] | Kueue WorkloadPriorityClass "
            "top (label kueue.x-k8s.io/priority-class) is not allowed for tenant ml-team; use "
            "one of: gpu-batch, gpu-training"}},
          {"on a bare ReplicaSet's template",
           "ml-a",
           replica_set,
           {"spec.template.metadata.labels[\"kueue.x-k8s.io/priority-class\"] | Kueue "
            "WorkloadPriorityClass top (label kueue.x-k8s.io/priority-class) is not allowed for "
            "tenant ml-team; use one of: gpu-batch, gpu-training"}},
          {"on a Deployment's pod template (its Pods run as single-pod workloads)",
           "ml-a",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{)"
           R"("template":{"metadata":{"labels":{"kueue.x-k8s.io/priority-class":"top"}},)"
           R"("spec":{"containers":[)" +
               gpu + "]}}}}",
           {"spec.template.metadata.labels[\"kueue.x-k8s.io/priority-class\"] | Kueue "
            "WorkloadPriorityClass top (label kueue.x-k8s.io/priority-class) is not allowed for "
            "tenant ml-team; use one of: gpu-batch, gpu-training"}},
          {"a tenant without priority.allowed", "open", job("platform-critical"), {}},
      });
}

// With the cluster's classes known, its globalDefault class is what the Priority plugin gave a
// pod that named none, declared in the policy or not; the policy's is then just a class.
TEST_CASE("rule GPU010: the cluster's globalDefault class counts as unset", "[rules][GPU010]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_allowed_priority_class_rule();
  const FakePriorityClasses cluster({{"standard", 100, "PreemptLowerPriority", true},
                                     {"cluster-default", 0, "PreemptLowerPriority", false}});
  struct Case {
    const char* name;
    std::string object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"the cluster's globalDefault class, not in the policy", gpu_pod("standard"), {}},
      {"the policy's globalDefault class, not the cluster's",
       gpu_pod("cluster-default"),
       {"spec.priorityClassName | priorityClassName cluster-default is not allowed for tenant "
        "ml-team; use one of: gpu-batch, gpu-training"}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      PodFixture pod(policy, c.object, "ml-a");
      pod.request.priority_classes = &cluster;
      CHECK(check_rule(*rule, pod) == c.expected);
    }
  }
}

}  // namespace
}  // namespace allowed_priority_class_test
}  // namespace gpuadmit::testing
