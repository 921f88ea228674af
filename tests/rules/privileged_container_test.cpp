#include "rules/privileged_container.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace privileged_container_test {
namespace {

constexpr std::string_view kPrivileged = R"("securityContext":{"privileged":true})";
constexpr std::string_view kInstead =
    "; drop privileged and grant only the capabilities it needs "
    "(securityContext.capabilities.add), or run a node agent as a DaemonSet in one of the policy's "
    "nodeAgents namespaces";

std::string without_gpu(std::string_view path, std::string_view who) {
  return std::string(path) + ".securityContext.privileged | " + std::string(who) +
         " requests no GPU but is privileged, so it sees every GPU of the node it runs on: the "
         "container runtime gives a privileged container every device node, and "
         "NVIDIA_VISIBLE_DEVICES=void cannot hide them" +
         std::string(kInstead);
}
std::string with_gpu(std::string_view path, std::string_view who) {
  return std::string(path) + ".securityContext.privileged | " + std::string(who) +
         " is privileged, so it sees every GPU of its node, not only those allocated to it: the "
         "container runtime gives a privileged container every device node" +
         std::string(kInstead);
}
std::string cpu(std::string_view name, std::string_view extra = kPrivileged) {
  return container(name, "", "", extra);
}
std::string gpu(std::string_view name, std::string_view extra = kPrivileged) {
  return container(name, "", R"({"nvidia.com/gpu":"1"})", extra);
}

TEST_CASE("rule GPU026: privileged containers see every GPU", "[rules][GPU026]") {
  auto policy = policy_from_yaml(kFleetPolicy);  // t4, v100, mig-single pools are untainted
  auto rule = make_privileged_container_rule();
  REQUIRE(rule->id() == "GPU026");
  REQUIRE(rule->name() == "NoPrivilegedContainerOnGpuNodes");
  REQUIRE(rule->default_action() == Action::kDeny);
  const std::string c0 = "spec.containers[0]";
  run_cases(
      *rule, policy,
      {
          {"an unprivileged pod passes", "default", make_pod(cpu("web", "")), {}},
          {"privileged: false passes",
           "default",
           make_pod(cpu("web", R"("securityContext":{"privileged":false})")),
           {}},
          // The API server refuses a string; nothing gpuadmit should guess at.
          {"privileged as a string is not privileged",
           "default",
           make_pod(cpu("web", R"("securityContext":{"privileged":"true"})")),
           {}},
          {"a privileged container that requests no GPU",
           "default",
           make_pod(cpu("web")),
           {without_gpu(c0, "container web")}},
          {"a privileged container that requests a GPU sees the others too",
           "ml-a",
           make_pod(gpu("trainer")),
           {with_gpu(c0, "container trainer")}},
          {"a container with a DRA claim is one that may get GPUs",
           "default",
           make_pod(
               container("c", "", "",
                         std::string(kPrivileged) + R"(,"resources":{"claims":[{"name":"g"}]})")),
           {with_gpu(c0, "container c")}},
          {"the privileged sidecar of a GPU pod, not the unprivileged trainer",
           "ml-a",
           make_pod(gpu("trainer", "") + "," + cpu("agent")),
           {without_gpu("spec.containers[1]", "container agent")}},
          {"init and ephemeral containers (kubectl debug --profile=sysadmin)",
           "default",
           make_pod(cpu("web", ""), R"("initContainers":[)" + cpu("setup") +
                                        R"(],"ephemeralContainers":[)" + cpu("debugger") + "]"),
           {without_gpu("spec.initContainers[0]", "init container setup"),
            without_gpu("spec.ephemeralContainers[0]", "ephemeral container debugger")}},
          {"a Deployment's template",
           "default",
           make_deployment(cpu("web")),
           {without_gpu("spec.template.spec.containers[0]", "container web")}},
          {"a DaemonSet in a nodeAgents namespace is excepted (node agents need every GPU)",
           "node-agents",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},"spec":
               {"template":{"spec":{"containers":[{"name":"c","securityContext":
               {"privileged":true}}]}}}})",
           {}},
          {"a DaemonSet elsewhere is judged like any workload",
           "default",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},"spec":
               {"template":{"spec":{"containers":[{"name":"c","securityContext":
               {"privileged":true}}]}}}})",
           {without_gpu("spec.template.spec.containers[0]", "container c")}},
      });
}

TEST_CASE("rule GPU026: a DaemonSet-owned pod is excepted in a nodeAgents namespace only",
          "[rules][GPU026]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  PodFixture agent(policy, make_pod(gpu("dcgm")), "node-agents");
  agent.request.daemonset_owned = true;
  CHECK(check_rule(*make_privileged_container_rule(), agent).empty());
  PodFixture tenant(policy, make_pod(gpu("dcgm")), "ml-a");
  tenant.request.daemonset_owned = true;
  CHECK(check_rule(*make_privileged_container_rule(), tenant).size() == 1);
}

// Where every GPU pool is tainted, a pod without GPUs that tolerates none of them never runs on
// a GPU node: its privileged containers see no GPU (a CI runner with Docker in Docker).
TEST_CASE("rule GPU026: pods that cannot reach a tainted GPU pool are not reported",
          "[rules][GPU026]") {
  auto policy = policy_from_yaml(R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: tainted}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
        - {key: pool.example.com/a100, value: "true", effect: NoSchedule}
    l4:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
)YAML");
  auto rule = make_privileged_container_rule();
  const std::string c0 = "spec.containers[0]";
  const std::string kGpuToleration =
      R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])";
  run_cases(*rule, policy,
            {
                {"tolerating nothing", "default", make_pod(cpu("runner")), {}},
                {"tolerating one of a100's two taints is not enough, but all of l4's is",
                 "default",
                 make_pod(cpu("runner"), kGpuToleration),
                 {without_gpu(c0, "container runner")}},
                {"the key-less Exists toleration tolerates every pool",
                 "default",
                 make_pod(cpu("runner"), R"("tolerations":[{"operator":"Exists"}])"),
                 {without_gpu(c0, "container runner")}},
                {"a GPU pod runs on a GPU node, tolerations or not",
                 "default",
                 make_pod(gpu("trainer")),
                 {with_gpu(c0, "container trainer")}},
            });
}

}  // namespace
}  // namespace privileged_container_test
}  // namespace gpuadmit::testing
