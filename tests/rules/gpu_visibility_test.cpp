#include "rules/gpu_visibility.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace gpu_visibility_test {
namespace {

constexpr std::string_view kInstead =
    "request the GPUs it needs (resources.limits[\"nvidia.com/gpu\"]) instead";

std::string cpu(std::string_view extra) { return container("web", "", "", extra); }
std::string gpu() { return container("trainer", "", R"({"nvidia.com/gpu":"1"})"); }
std::string env(std::string_view value) {
  return R"("env":[{"name":"A","value":"1"},{"name":"NVIDIA_VISIBLE_DEVICES",)" +
         std::string(value) + "}]";
}
std::string env_message(std::string_view who, std::string_view what) {
  return std::string(who) + " but " + std::string(what) +
         "; NVIDIA's container runtime exposes the GPUs it names: " + std::string(kInstead) +
         ", or set it to void";
}
std::string host_path(std::string_view path, std::string_view mount_extra = "") {
  return make_pod(
      cpu(R"("volumeMounts":[{"name":"dev","mountPath":"/host")" + std::string(mount_extra) + "}]"),
      R"("volumes":[{"name":"dev","hostPath":{"path":")" + std::string(path) + "\"}}]");
}
std::string mount_message(std::string_view node_path) {
  return "container web requests no GPU but mounts the node's " + std::string(node_path) +
         " through hostPath volume dev, which holds GPU device nodes; " + std::string(kInstead) +
         " of mounting device nodes";
}

TEST_CASE("rule GPU024: no GPU without a request", "[rules][GPU024]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_gpu_visibility_rule();
  REQUIRE(rule->id() == "GPU024");
  REQUIRE(rule->default_action() == Action::kDeny);
  const std::string kWeb = "container web requests no GPU";
  const std::string kEnv1 = "spec.containers[0].env[1] | ";
  run_cases(
      *rule, policy,
      {
          {"a plain pod passes", "default", make_pod(cpu("")), {}},
          {"void, none, empty and no value expose nothing",
           "default",
           make_pod(cpu(env(R"("value":"void")")) + "," +
                    container("b", "", "", env(R"("value":"none")")) + "," +
                    container("c", "", "", env(R"("value":"")")) + "," +
                    container("d", "", "", env(R"("x":1)"))),
           {}},
          {"all",
           "default",
           make_pod(cpu(env(R"("value":"all")"))),
           {kEnv1 + env_message(kWeb, "sets NVIDIA_VISIBLE_DEVICES to \"all\"")}},
          {"a device index or UUID",
           "default",
           make_pod(cpu(env(R"("value":"0,GPU-1234")"))),
           {kEnv1 + env_message(kWeb, "sets NVIDIA_VISIBLE_DEVICES to \"0,GPU-1234\"")}},
          {"a $(VAR) reference is not void",
           "default",
           make_pod(cpu(env(R"x("value":"$(GPUS)")x"))),
           {kEnv1 + env_message(kWeb, "sets NVIDIA_VISIBLE_DEVICES to \"$(GPUS)\"")}},
          {"valueFrom cannot be checked",
           "default",
           make_pod(cpu(env(R"("valueFrom":{"configMapKeyRef":{"name":"g","key":"k"}})"))),
           {kEnv1 + env_message(kWeb,
                                "takes NVIDIA_VISIBLE_DEVICES from valueFrom, which "
                                "gpuadmit cannot check")}},
          {"a sibling of a GPU container, named in the message",
           "ml-a",
           make_pod(gpu() + "," + cpu(env(R"("value":"all")"))),
           {"spec.containers[1].env[1] | " +
            env_message("container web requests no GPU (the pod's GPUs go to container trainer, "
                        "not to it)",
                        "sets NVIDIA_VISIBLE_DEVICES to \"all\"")}},
          {"an init container",
           "default",
           make_pod(cpu(""), R"("initContainers":[)" +
                                 container("setup", "", "", env(R"("value":"all")")) + "]"),
           {"spec.initContainers[0].env[1] | " +
            env_message("init container setup requests no GPU",
                        "sets NVIDIA_VISIBLE_DEVICES to \"all\"")}},
          {"the GPU container itself may set it (the device plugin's business)",
           "ml-a",
           make_pod(container("trainer", "", R"({"nvidia.com/gpu":"1"})", env(R"("value":"all")"))),
           {}},
          {"CUDA_VISIBLE_DEVICES only selects among visible GPUs: not checked",
           "default",
           make_pod(cpu(R"("env":[{"name":"CUDA_VISIBLE_DEVICES","value":"0"}])")),
           {}},
          {"hostPath /dev/nvidia0",
           "default",
           host_path("/dev/nvidia0"),
           {"spec.containers[0].volumeMounts[0] | " + mount_message("/dev/nvidia0")}},
          {"hostPath /dev/dri/, normalised",
           "default",
           host_path("/dev//dri/"),
           {"spec.containers[0].volumeMounts[0] | " + mount_message("/dev/dri")}},
          {"hostPath /dev with subPath nvidiactl",
           "default",
           host_path("/dev", R"(,"subPath":"nvidiactl")"),
           {"spec.containers[0].volumeMounts[0] | " + mount_message("/dev/nvidiactl")}},
          {"hostPath /dev with a subPath elsewhere",
           "default",
           host_path("/dev", R"(,"subPath":"shm")"),
           {}},
          {"hostPath /dev (a folder above the devices)",
           "default",
           host_path("/dev"),
           {"spec.containers[0].volumeMounts[0] | " + mount_message("/dev")}},
          {"hostPath /dev/null and /var/log pass",
           "default",
           make_pod(
               cpu(R"("volumeMounts":[{"name":"a","mountPath":"/a"},{"name":"b","mountPath":"/b"}])"),
               R"("volumes":[{"name":"a","hostPath":{"path":"/dev/null"}},)"
               R"({"name":"b","hostPath":{"path":"/var/log"}}])"),
           {}},
          {"a volume at the runtime's device-list folder",
           "default",
           make_pod(
               cpu(R"("volumeMounts":[{"name":"e","mountPath":"/var/run/nvidia-container-devices/all"}])"),
               R"("volumes":[{"name":"e","emptyDir":{}}])"),
           {"spec.containers[0].volumeMounts[0] | container web requests no GPU but mounts a "
            "volume at /var/run/nvidia-container-devices/all, which NVIDIA's container runtime "
            "reads as a list of GPUs to expose (accept-nvidia-visible-devices-as-volume-mounts); " +
            std::string(kInstead) + ", and mount it elsewhere"}},
          {"the NVIDIA runtime class without a GPU",
           "default",
           make_pod(cpu(""), R"("runtimeClassName":"nvidia-cdi")"),
           {"spec.runtimeClassName | runtimeClassName nvidia-cdi runs NVIDIA's container "
            "runtime, which exposes the GPUs an image's NVIDIA_VISIBLE_DEVICES names, but no "
            "container of the pod requests a GPU; request the GPUs the pod needs "
            "(resources.limits[\"nvidia.com/gpu\"]), or remove runtimeClassName"}},
          {"the NVIDIA runtime class in a GPU pod is what it is for",
           "ml-a",
           make_pod(gpu() + "," + cpu(""), R"("runtimeClassName":"nvidia")"),
           {}},
          {"another runtime class",
           "default",
           make_pod(cpu(""), R"("runtimeClassName":"gvisor")"),
           {}},
          {"a CDI annotation on a pod that requests no GPU",
           "default",
           make_pod(cpu(""), "", R"({"cdi.k8s.io/gpus":"nvidia.com/gpu=all","x":"y"})"),
           {"metadata.annotations[\"cdi.k8s.io/gpus\"] | annotation cdi.k8s.io/gpus asks the "
            "container runtime for CDI devices (\"nvidia.com/gpu=all\"), but no container of the "
            "pod requests a GPU; request the GPUs the pod needs "
            "(resources.limits[\"nvidia.com/gpu\"]), or remove the annotation"}},
          {"a Deployment template: paths in the template",
           "default",
           make_deployment(cpu(env(R"("value":"all")"))),
           {"spec.template.spec.containers[0].env[1] | " +
            env_message(kWeb, "sets NVIDIA_VISIBLE_DEVICES to \"all\"")}},
          {"a DaemonSet in a nodeAgents namespace is excepted (node agents need every GPU)",
           "node-agents",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},"spec":
               {"template":{"spec":{"containers":[{"name":"c","env":[{"name":
               "NVIDIA_VISIBLE_DEVICES","value":"all"}]}]}}}})",
           {}},
          {"a DaemonSet elsewhere is judged",
           "default",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},"spec":
               {"template":{"spec":{"containers":[{"name":"c","env":[{"name":
               "NVIDIA_VISIBLE_DEVICES","value":"all"}]}]}}}})",
           {"spec.template.spec.containers[0].env[0] | " +
            env_message("container c requests no GPU", "sets NVIDIA_VISIBLE_DEVICES to \"all\"")}},
      });
}

TEST_CASE("rule GPU024: a DaemonSet-owned pod is excepted in a nodeAgents namespace only",
          "[rules][GPU024]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  PodFixture agent(policy, make_pod(cpu(env(R"("value":"all")"))), "node-agents");
  agent.request.daemonset_owned = true;
  CHECK(check_rule(*make_gpu_visibility_rule(), agent).empty());
  PodFixture tenant(policy, make_pod(cpu(env(R"("value":"all")"))), "ml-a");
  tenant.request.daemonset_owned = true;
  CHECK(check_rule(*make_gpu_visibility_rule(), tenant).size() == 1);
}

// `kubectl debug` (pods/ephemeralcontainers): the containers that UPDATE adds are judged, the
// rest of the Pod was at its CREATE (a container admitted before a stricter policy, the pod's
// runtime class) and is not again.
TEST_CASE("rule GPU024: an ephemeral-container UPDATE judges the containers it adds",
          "[rules][GPU024]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_gpu_visibility_rule();
  CHECK(rule->evaluates_added_ephemeral_containers());
  const std::string all = R"("env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"all"}])";
  PodFixture pod(policy, make_pod(container("app", "", "", all),
                                  R"("runtimeClassName":"nvidia","ephemeralContainers":[)" +
                                      container("old", "", "", all) + "," +
                                      container("dbg", "", "", all) + "]"));
  pod.request.operation = Operation::kUpdate;
  pod.request.ephemeral_update = true;
  pod.request.added_ephemeral_containers = {"dbg"};
  CHECK(check_rule(*rule, pod) ==
        std::vector<std::string>{
            "spec.ephemeralContainers[1].env[0] | ephemeral container dbg requests no GPU but "
            "sets NVIDIA_VISIBLE_DEVICES to \"all\"; NVIDIA's container runtime exposes the "
            "GPUs it names: request the GPUs it needs (resources.limits[\"nvidia.com/gpu\"]) "
            "instead, or set it to void"});
}

}  // namespace
}  // namespace gpu_visibility_test
}  // namespace gpuadmit::testing
