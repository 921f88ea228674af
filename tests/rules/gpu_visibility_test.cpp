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
            "reads as a list of GPUs to expose (accept-nvidia-visible-devices-as-volume-mounts: "
            "every path that starts with /var/run/nvidia-container-devices); " +
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

// Issue 34 point 3 (SPEC §2): a container that requests GPUs sees the ones allocated to it, no
// more. With the device plugin's envvar strategy the container's own NVIDIA_VISIBLE_DEVICES
// replaces the plugin's (kubelet puts the container's env after the device manager's;
// NVIDIA/k8s-device-plugin#61), so it is denied on every container, valueFrom and envFrom
// included; void and none only hide the container's own GPUs.
std::string trainer(std::string_view extra) {
  return container("trainer", "", R"({"nvidia.com/gpu":"1"})", extra);
}
std::string gpu_env_message(std::string_view what) {
  return "container trainer requests GPUs but " + std::string(what) +
         "; NVIDIA's container runtime exposes the GPUs it names, and a container's own value "
         "replaces the device plugin's list of the GPUs allocated to it: remove it";
}
std::string env_from(std::string_view sources) {
  return R"("envFrom":[)" + std::string(sources) + "]";
}
constexpr std::string_view kEnvFromGpuRemedy =
    "; NVIDIA's container runtime exposes the GPUs it names, and a container's own value "
    "replaces the device plugin's list of the GPUs allocated to it: name the variables it needs "
    "in env, or give envFrom a prefix";
std::string device_list_mount(std::string_view mount_path) {
  return R"("volumeMounts":[{"name":"e","mountPath":")" + std::string(mount_path) + R"("}])";
}
constexpr std::string_view kEmptyDir = R"("volumes":[{"name":"e","emptyDir":{}}])";
std::string device_list_message(std::string_view who, std::string_view at, bool gets_gpus) {
  const std::string what =
      std::string(who) + " but mounts a volume at " + std::string(at) +
      ", which NVIDIA's container runtime reads as a list of GPUs to expose "
      "(accept-nvidia-visible-devices-as-volume-mounts: every path that starts with "
      "/var/run/nvidia-container-devices)";
  if (gets_gpus) return what + " beside the ones allocated to it; mount it elsewhere";
  return what + "; " + std::string(kInstead) + ", and mount it elsewhere";
}

TEST_CASE("rule GPU024: a GPU container sees only its own GPUs", "[rules][GPU024]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_gpu_visibility_rule();
  const std::string kEnv1 = "spec.containers[0].env[1] | ";
  const std::string kTrainer = "container trainer requests GPUs";
  run_cases(
      *rule, policy,
      {
          {"a legitimate GPU pod: own GPUs, a data volume, the NVIDIA runtime class",
           "ml-a",
           make_pod(trainer(R"("env":[{"name":"LOG_LEVEL","value":"info"}],)"
                            R"("volumeMounts":[{"name":"e","mountPath":"/data"}])"),
                    std::string(kEmptyDir) + R"(,"runtimeClassName":"nvidia")"),
           {}},
          {"all",
           "ml-a",
           make_pod(trainer(env(R"("value":"all")"))),
           {kEnv1 + gpu_env_message("sets NVIDIA_VISIBLE_DEVICES to \"all\"")}},
          {"indexes and UUIDs",
           "ml-a",
           make_pod(trainer(env(R"("value":"0,1,GPU-8f2c")"))),
           {kEnv1 + gpu_env_message("sets NVIDIA_VISIBLE_DEVICES to \"0,1,GPU-8f2c\"")}},
          {"only the exact no-device spellings pass (v1.11 read \"void,0\" as devices)",
           "ml-a",
           make_pod(trainer(env(R"("value":"void,0")"))),
           {kEnv1 + gpu_env_message("sets NVIDIA_VISIBLE_DEVICES to \"void,0\"")}},
          {"void, none, empty and no value only hide its own GPUs: allowed",
           "ml-a",
           make_pod(trainer(env(R"("value":"void")")) + "," +
                    container("b", "", R"({"nvidia.com/gpu":"1"})", env(R"("value":"none")")) +
                    "," + container("c", "", R"({"nvidia.com/gpu":"1"})", env(R"("value":"")")) +
                    "," + container("d", "", R"({"nvidia.com/gpu":"1"})", env(R"("x":1)"))),
           {}},
          {"valueFrom",
           "ml-a",
           make_pod(trainer(env(R"("valueFrom":{"configMapKeyRef":{"name":"g","key":"k"}})"))),
           {kEnv1 + gpu_env_message("takes NVIDIA_VISIBLE_DEVICES from valueFrom, which gpuadmit "
                                    "cannot check")}},
          {"envFrom a ConfigMap and a Secret: their keys are unknown",
           "ml-a",
           make_pod(trainer(env_from(R"({"configMapRef":{"name":"gpu-env"}},)"
                                     R"({"secretRef":{"name":"creds"}})"))),
           {"spec.containers[0].envFrom[0] | " + kTrainer +
                " but takes its environment from envFrom[0] (configMapRef gpu-env), which may "
                "set NVIDIA_VISIBLE_DEVICES and gpuadmit cannot check" +
                std::string(kEnvFromGpuRemedy),
            "spec.containers[0].envFrom[1] | " + kTrainer +
                " but takes its environment from envFrom[1] (secretRef creds), which may set "
                "NVIDIA_VISIBLE_DEVICES and gpuadmit cannot check" +
                std::string(kEnvFromGpuRemedy)}},
          {"envFrom with a prefix that can spell the name",
           "ml-a",
           make_pod(trainer(env_from(R"({"prefix":"NVIDIA_","configMapRef":{"name":"g"}})"))),
           {"spec.containers[0].envFrom[0] | " + kTrainer +
            " but takes its environment from envFrom[0] (configMapRef g), which may set "
            "NVIDIA_VISIBLE_DEVICES and gpuadmit cannot check" +
            std::string(kEnvFromGpuRemedy)}},
          {"envFrom with a prefix that cannot spell it passes",
           "ml-a",
           make_pod(trainer(
               env_from(R"({"prefix":"APP_","configMapRef":{"name":"g"}},)"
                        R"({"prefix":"NVIDIA_VISIBLE_DEVICES_","secretRef":{"name":"s"}})"))),
           {}},
          {"envFrom on a GPU container is denied even beside a void env entry (void hides it all)",
           "ml-a",
           make_pod(trainer(env(R"("value":"void")") + "," +
                            env_from(R"({"configMapRef":{"name":"g"}})"))),
           {"spec.containers[0].envFrom[0] | " + kTrainer +
            " but takes its environment from envFrom[0] (configMapRef g), which may set "
            "NVIDIA_VISIBLE_DEVICES and gpuadmit cannot check" +
            std::string(kEnvFromGpuRemedy)}},
          {"the device-list folder, as the toolkit spells it",
           "ml-a",
           make_pod(trainer(device_list_mount("/var/run/nvidia-container-devicesall")), kEmptyDir),
           {"spec.containers[0].volumeMounts[0] | " +
            device_list_message(kTrainer, "/var/run/nvidia-container-devicesall", true)}},
          {"hostPath device nodes in a GPU container: the device cgroup keeps other GPUs shut",
           "ml-a",
           make_pod(trainer(R"("volumeMounts":[{"name":"dev","mountPath":"/host"}])"),
                    R"("volumes":[{"name":"dev","hostPath":{"path":"/dev/nvidia1"}}])"),
           {}},
          {"a container with a DRA claim is judged as a GPU container",
           "ml-a",
           make_pod(
               container("c", "", "",
                         R"("resources":{"claims":[{"name":"gpu"}]},)" + env(R"("value":"all")")),
               R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"}])"),
           {"spec.containers[0].env[1] | container c requests GPUs but sets "
            "NVIDIA_VISIBLE_DEVICES to \"all\"; NVIDIA's container runtime exposes the GPUs it "
            "names, and a container's own value replaces the device plugin's list of the GPUs "
            "allocated to it: remove it"}},
          {"a CDI annotation on a GPU pod",
           "ml-a",
           make_pod(trainer(""), "", R"({"cdi.k8s.io/extra":"nvidia.com/gpu=all"})"),
           {"metadata.annotations[\"cdi.k8s.io/extra\"] | annotation cdi.k8s.io/extra asks the "
            "container runtime for CDI devices (\"nvidia.com/gpu=all\") beyond the GPUs its "
            "containers request (only the device plugin or a DRA driver names devices); remove "
            "the annotation"}},
          {"a CDI annotation in a GPU Deployment's template",
           "ml-a",
           make_deployment(trainer(""), "",
                           R"({"cdi.k8s.io/x":"nvidia.com/gpu=0,nvidia.com/gpu=1"})"),
           {"spec.template.metadata.annotations[\"cdi.k8s.io/x\"] | annotation cdi.k8s.io/x asks "
            "the container runtime for CDI devices (\"nvidia.com/gpu=0,nvidia.com/gpu=1\") beyond "
            "the GPUs its containers request (only the device plugin or a DRA driver names "
            "devices); remove the annotation"}},
          {"a GPU init container too",
           "ml-a",
           make_pod(cpu(""), R"("initContainers":[)" +
                                 container("warm", "", R"({"nvidia.com/gpu":"2"})",
                                           env(R"("value":"all")")) +
                                 "]"),
           {"spec.initContainers[0].env[1] | init container warm requests GPUs but sets "
            "NVIDIA_VISIBLE_DEVICES to \"all\"; NVIDIA's container runtime exposes the GPUs it "
            "names, and a container's own value replaces the device plugin's list of the GPUs "
            "allocated to it: remove it"}},
      });
}

// Issue 34 point 4: the toolkit cleans the container path (filepath.Clean) and compares it by
// plain string prefix with /var/run/nvidia-container-devices (cuda_image.go
// requestsFromMounts); kubelet makes a relative mountPath absolute. Every spelling that cleans
// under the prefix is denied, the message naming the cleaned path.
TEST_CASE("rule GPU024: device-list mounts by any spelling", "[rules][GPU024]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_gpu_visibility_rule();
  const std::string kWeb = "container web requests no GPU";
  const std::string kAt = "spec.containers[0].volumeMounts[0] | ";
  auto row = [&](std::string name, std::string_view mount_path, std::string_view at) {
    return RuleCase{std::move(name),
                    "default",
                    make_pod(cpu(device_list_mount(mount_path)), kEmptyDir),
                    {kAt + device_list_message(kWeb, at, false)}};
  };
  auto passes = [&](std::string name, std::string_view mount_path) {
    return RuleCase{
        std::move(name), "default", make_pod(cpu(device_list_mount(mount_path)), kEmptyDir), {}};
  };
  run_cases(
      *rule, policy,
      {
          row("no slash after the root: a plain string prefix",
              "/var/run/nvidia-container-devicesall", "/var/run/nvidia-container-devicesall"),
          row("a .. element", "/var/run/x/../nvidia-container-devices/all",
              "/var/run/x/../nvidia-container-devices/all (/var/run/nvidia-container-devices/all "
              "once cleaned)"),
          row("doubled slash and a . element", "//var/run/./nvidia-container-devices/0",
              "//var/run/./nvidia-container-devices/0 (/var/run/nvidia-container-devices/0 once "
              "cleaned)"),
          row("relative: kubelet makes it absolute", "var/run/nvidia-container-devices/1",
              "var/run/nvidia-container-devices/1 (/var/run/nvidia-container-devices/1 once "
              "cleaned)"),
          row(".. above the root is the root",
              "/../../var/run/nvidia-container-devices/cdi/nvidia.com/gpu/all",
              "/../../var/run/nvidia-container-devices/cdi/nvidia.com/gpu/all "
              "(/var/run/nvidia-container-devices/cdi/nvidia.com/gpu/all once cleaned)"),
          row("an IMEX channel request", "/var/run/nvidia-container-devices/imex/0",
              "/var/run/nvidia-container-devices/imex/0"),
          row("the root itself (no device to the toolkit; denied all the same)",
              "/var/run/nvidia-container-devices/",
              "/var/run/nvidia-container-devices/ "
              "(/var/run/nvidia-container-devices once cleaned)"),
          passes("/run is not the toolkit's root (a string compare)",
                 "/run/nvidia-container-devices/all"),
          passes(".. out of the root", "/var/run/nvidia-container-devices/../all"),
          passes("the name elsewhere", "/opt/nvidia-container-devices/all"),
          passes("a near miss", "/var/run/nvidia-container-device"),
      });
}

// envFrom on a container that requests no GPU: `env` takes precedence over `envFrom`, so it is
// safe once env names the variable. With `gpuVisibility: fix` the mutation writes void, and the
// rule judges every such container as mutated (a template gpuadmit does not patch included);
// with deny or warn (no mutation) a ConfigMap could carry `all`.
TEST_CASE("rule GPU024: envFrom on a container without GPUs", "[rules][GPU024]") {
  auto rule = make_gpu_visibility_rule();
  const std::string from_app = env_from(R"({"configMapRef":{"name":"app"}})");
  SECTION("fix: the mutation's void takes precedence") {
    PodFixture pod(policy_from_yaml(kFleetPolicy), make_pod(cpu(from_app)));
    CHECK(check_rule(*rule, pod).empty());
  }
  auto policy =
      policy_from_yaml(std::string(kFleetPolicy) + "  enforcement:\n    gpuVisibility: deny\n");
  run_cases(
      *rule, policy,
      {
          {"envFrom alone",
           "default",
           make_pod(cpu(env_from(R"({"configMapRef":{"name":"app"}})"))),
           {"spec.containers[0].envFrom[0] | container web requests no GPU but takes its "
            "environment from envFrom[0] (configMapRef app), which may set "
            "NVIDIA_VISIBLE_DEVICES and gpuadmit cannot check; NVIDIA's container runtime "
            "exposes the GPUs it names: request the GPUs it needs "
            "(resources.limits[\"nvidia.com/gpu\"]) instead, or set NVIDIA_VISIBLE_DEVICES to "
            "void in env, which takes precedence over envFrom"}},
          {"envFrom beside env NVIDIA_VISIBLE_DEVICES=void (what the mutation writes)",
           "default",
           make_pod(cpu(env_from(R"({"configMapRef":{"name":"app"}})") + "," +
                        env(R"("value":"void")"))),
           {}},
          {"envFrom with a safe prefix",
           "default",
           make_pod(cpu(env_from(R"({"prefix":"APP_","secretRef":{"name":"s"}})"))),
           {}},
          {"an envFrom entry of neither kind is still unknown",
           "default",
           make_pod(cpu(env_from(R"({"prefix":""},"x")"))),
           {"spec.containers[0].envFrom[0] | container web requests no GPU but takes its "
            "environment from envFrom[0], which may set NVIDIA_VISIBLE_DEVICES and gpuadmit "
            "cannot check; NVIDIA's container runtime exposes the GPUs it names: request the GPUs "
            "it needs (resources.limits[\"nvidia.com/gpu\"]) instead, or set "
            "NVIDIA_VISIBLE_DEVICES to void in env, which takes precedence over envFrom"}},
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
