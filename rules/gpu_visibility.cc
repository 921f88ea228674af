#include "rules/gpu_visibility.h"

#include <string>
#include <vector>

#include "engine/controllers.h"
#include "engine/gpu_visibility.h"
#include "engine/workload.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

constexpr std::string_view kRequestInstead =
    "request the GPUs it needs (resources.limits[\"nvidia.com/gpu\"]) instead";

// nvidia-container-toolkit's DeviceListAsVolumeMountsRoot: with
// accept-nvidia-visible-devices-as-volume-mounts, every mount under it names a device.
constexpr std::string_view kDeviceListMountRoot = "/var/run/nvidia-container-devices";

// "/dev//nvidia0/" → "/dev/nvidia0"; "." segments dropped (the API server forbids "..").
std::string normalized(std::string_view path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t end = path.find('/', i);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(i, end - i);
    if (!segment.empty() && segment != ".") {
      out += '/';
      out += segment;
    }
    i = end;
  }
  return out.empty() ? "/" : out;
}

bool under(std::string_view path, std::string_view root) {
  return path == root || (path.size() > root.size() && path.substr(0, root.size()) == root &&
                          path[root.size()] == '/');
}

// A node path that is, or holds, GPU device nodes: /dev/nvidia* (nvidia0, nvidiactl,
// nvidia-uvm, nvidia-caps/…), /dev/dri (DRM render nodes), or a folder above them.
bool reaches_gpu_devices(std::string_view path) {
  return path == "/" || path == "/dev" || path.substr(0, 11) == "/dev/nvidia" ||
         under(path, "/dev/dri");
}

class GpuVisibilityRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU024"; }
  std::string_view name() const override { return "NoGpuWithoutRequest"; }
  std::string_view summary() const override {
    return "a container that requests no GPU must not set NVIDIA_VISIBLE_DEVICES, mount GPU "
           "device nodes or the runtime's device-list folder, or run under the NVIDIA runtime "
           "class";
  }
  Action default_action() const override { return Action::kDeny; }

  // Also the ephemeral containers `kubectl debug` adds (pods/ephemeralcontainers): a debug image
  // is as able to see the node's GPUs as any other.
  bool evaluates_added_ephemeral_containers() const override { return true; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (runs_on_every_node(ctx)) return;
    const CompiledPolicy& policy = *ctx.policy;
    const GpuResources gpu(pod, ctx);
    std::vector<const ContainerRef*> without_gpu;
    std::string with_gpu;  // the first container that requests GPUs, for the message
    for (size_t i = 0; i < pod.containers().size(); ++i) {
      const ContainerRef& ref = pod.containers()[i];
      if (!container_may_get_gpus(pod, i, *gpu)) {
        if (in_scope(ctx.request, ref)) without_gpu.push_back(&ref);
      } else if (with_gpu.empty()) {
        with_gpu = container_label(ref);
      }
    }
    for (const ContainerRef* ref : without_gpu) {
      const std::string who = who_requests_none(*ref, with_gpu);
      check_env(pod, *ref, who, out);
      check_mounts(pod, *ref, who, out);
    }
    // The pod's own settings were judged at its CREATE and an ephemeral-container UPDATE
    // cannot change them.
    if (!with_gpu.empty() || (ctx.request != nullptr && ctx.request->ephemeral_update)) return;
    check_runtime_class(pod, policy, out);
    check_cdi_annotations(pod, out);
  }

 private:
  static std::string who_requests_none(const ContainerRef& ref, const std::string& with_gpu) {
    std::string who = container_label(ref) + " requests no GPU";
    if (!with_gpu.empty()) who += " (the pod's GPUs go to " + with_gpu + ", not to it)";
    return who;
  }

  static void check_env(const PodView& pod, const ContainerRef& ref, const std::string& who,
                        std::vector<Violation>& out) {
    const Json* env = find_member(pod.container(ref), "env");
    if (env == nullptr || !env->is_array()) return;
    for (size_t i = 0; i < env->size(); ++i) {
      const Json& entry = (*env)[i];
      if (string_member(entry, "name") != kVisibleDevicesEnv) continue;
      const Json* value = find_member(entry, "value");
      std::string what;
      if (const Json* from = find_member(entry, "valueFrom"); from != nullptr && !from->is_null()) {
        what = "takes NVIDIA_VISIBLE_DEVICES from valueFrom, which gpuadmit cannot check";
      } else if (value == nullptr || value->is_null() ||
                 (value->is_string() && exposes_no_gpu(value->get_ref<const std::string&>()))) {
        continue;  // unset, "", void or none: no device
      } else {
        what = "sets NVIDIA_VISIBLE_DEVICES to " + json_text(*value);
      }
      out.push_back(Violation{who + " but " + what +
                                  "; NVIDIA's container runtime exposes the GPUs it names: " +
                                  std::string(kRequestInstead) + ", or set it to void",
                              ref.path + ".env[" + std::to_string(i) + "]"});
    }
  }

  static void check_mounts(const PodView& pod, const ContainerRef& ref, const std::string& who,
                           std::vector<Violation>& out) {
    const Json* mounts = find_member(pod.container(ref), "volumeMounts");
    if (mounts == nullptr || !mounts->is_array()) return;
    for (size_t i = 0; i < mounts->size(); ++i) {
      const Json& mount = (*mounts)[i];
      const std::string path = ref.path + ".volumeMounts[" + std::to_string(i) + "]";
      const std::string mount_path = normalized(string_member(mount, "mountPath"));
      if (under(mount_path, kDeviceListMountRoot)) {
        out.push_back(
            Violation{who + " but mounts a volume at " + mount_path +
                          ", which NVIDIA's container runtime reads as a list of GPUs to expose "
                          "(accept-nvidia-visible-devices-as-volume-mounts); " +
                          std::string(kRequestInstead) + ", and mount it elsewhere",
                      path});
        continue;
      }
      const std::string node_path = host_path_of(pod.spec(), mount);
      if (node_path.empty() || !reaches_gpu_devices(node_path)) continue;
      out.push_back(Violation{
          who + " but mounts the node's " + node_path + " through hostPath volume " +
              std::string(string_member(mount, "name")) + ", which holds GPU device nodes; " +
              std::string(kRequestInstead) + " of mounting device nodes",
          path});
    }
  }

  // The node path a volumeMount reaches through a hostPath volume (its subPath appended), or ""
  // when the volume is not a hostPath. With subPathExpr the path is not known at admission: the
  // volume's own path is judged (a folder above the devices still reaches them).
  static std::string host_path_of(const Json& spec, const Json& mount) {
    const Json* volumes = find_member(spec, "volumes");
    if (volumes == nullptr || !volumes->is_array()) return "";
    const std::string_view name = string_member(mount, "name");
    for (const Json& volume : *volumes) {
      if (string_member(volume, "name") != name) continue;
      const Json* host_path = find_member(volume, "hostPath");
      if (host_path == nullptr || !host_path->is_object()) return "";
      std::string path(string_member(*host_path, "path"));
      if (const std::string_view sub = string_member(mount, "subPath"); !sub.empty()) {
        path += "/";
        path += sub;
      }
      return normalized(path);
    }
    return "";
  }

  static void check_runtime_class(const PodView& pod, const CompiledPolicy& policy,
                                  std::vector<Violation>& out) {
    const std::string_view runtime_class = string_member(pod.spec(), "runtimeClassName");
    if (runtime_class.empty() || !policy.is_nvidia_runtime_class(runtime_class)) return;
    out.push_back(Violation{
        "runtimeClassName " + std::string(runtime_class) +
            " runs NVIDIA's container runtime, which exposes the GPUs an image's "
            "NVIDIA_VISIBLE_DEVICES names, but no container of the pod requests a GPU; " +
            "request the GPUs the pod needs (resources.limits[\"nvidia.com/gpu\"]), or remove "
            "runtimeClassName",
        pod.location().path + ".runtimeClassName"});
  }

  // CDI devices requested by annotation (cdi.k8s.io/<name>: nvidia.com/gpu=all): a runtime that
  // passes the pod's annotations to the container (or NVIDIA's runtime in CDI mode, which reads
  // the OCI spec's cdi.k8s.io/ annotations) injects those devices. Only the device plugin and
  // DRA driver should name devices; a pod that requests no GPU has no reason to.
  static void check_cdi_annotations(const PodView& pod, std::vector<Violation>& out) {
    const Json* metadata = pod.metadata();
    const Json* annotations = metadata != nullptr ? find_member(*metadata, "annotations") : nullptr;
    if (annotations == nullptr || !annotations->is_object()) return;
    const std::string base = dotted_path(pod.location().metadata) + ".annotations";
    for (auto it = annotations->begin(); it != annotations->end(); ++it) {
      if (it.key().rfind("cdi.k8s.io/", 0) != 0) continue;
      out.push_back(Violation{
          "annotation " + it.key() + " asks the container runtime for CDI devices (" +
              json_text(it.value()) +
              "), but no container of the pod requests a GPU; request the GPUs the pod needs "
              "(resources.limits[\"nvidia.com/gpu\"]), or remove the annotation",
          base + "[\"" + it.key() + "\"]"});
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_gpu_visibility_rule() {
  return std::make_unique<GpuVisibilityRule>();
}

}  // namespace gpuadmit
