#include "rules/gpu_visibility.h"

#include <algorithm>
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

// Why a container that requests GPUs may not name devices itself: with the device plugin's
// envvar strategy (its default) the plugin's NVIDIA_VISIBLE_DEVICES reaches the runtime before
// the container's own variables — kubelet GenerateRunContainerOptions appends the container's
// env and envFrom after the device manager's (`opts.Envs = append(opts.Envs, envs...)`), the CRI
// runtime lets a later entry replace an earlier one and the toolkit keeps the last value
// (image.WithEnv) — so the container's own value wins (NVIDIA/k8s-device-plugin#61).
constexpr std::string_view kReplacesAllocation =
    "NVIDIA's container runtime exposes the GPUs it names, and a container's own value replaces "
    "the device plugin's list of the GPUs allocated to it";

// "/dev//nvidia0/" → "/dev/nvidia0": empty and "." segments dropped. For hostPath, which the API
// server refuses with a ".." element (validatePathNoBacksteps; subPath:
// validateLocalDescendingPath), this is Go's filepath.Clean of the path made absolute.
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

// The container a finding is about: how messages name it and whether it may get GPUs.
struct Subject {
  const ContainerRef* ref;
  std::string who;  // "container web requests no GPU", "container trainer requests GPUs"
  bool gets_gpus;
};

class GpuVisibilityRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU024"; }
  std::string_view name() const override { return "NoGpuWithoutRequest"; }
  std::string_view summary() const override {
    return "no container may see a GPU it did not request: none may set NVIDIA_VISIBLE_DEVICES "
           "(other than void or none) or take it from valueFrom or envFrom, mount the runtime's "
           "device-list folder, or carry CDI annotations; one that requests no GPU may also not "
           "mount GPU device nodes or run under the NVIDIA runtime class";
  }
  Action default_action() const override { return Action::kDeny; }

  // Also the ephemeral containers `kubectl debug` adds (pods/ephemeralcontainers): a debug image
  // is as able to see the node's GPUs as any other.
  bool evaluates_added_ephemeral_containers() const override { return true; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (runs_on_every_node(ctx)) return;
    const GpuResources gpu(pod, ctx);
    // With `fix`, every container that requests no GPU is judged with the mutation's
    // NVIDIA_VISIBLE_DEVICES=void in its env (a Pod is mutated first, a template judged as its
    // Pods will be: engine/controllers.h), which takes precedence over envFrom.
    const bool hidden_by_mutation = ctx.policy->policy().enforcement.gpu_visibility == Action::kFix;
    std::string with_gpu;  // the first container that requests GPUs, for the messages
    for (size_t i = 0; i < pod.containers().size() && with_gpu.empty(); ++i) {
      if (container_may_get_gpus(pod, i, *gpu, ctx.dra))
        with_gpu = container_label(pod.containers()[i]);
    }
    for (size_t i = 0; i < pod.containers().size(); ++i) {
      const ContainerRef& ref = pod.containers()[i];
      if (!in_scope(ctx.request, ref)) continue;
      const bool gets_gpus = container_may_get_gpus(pod, i, *gpu, ctx.dra);
      const Subject subject{
          &ref,
          gets_gpus ? container_label(ref) + " requests GPUs" : who_requests_none(ref, with_gpu),
          gets_gpus};
      check_env(pod, subject, out);
      check_env_from(pod, subject, hidden_by_mutation, out);
      check_mounts(pod, subject, out);
    }
    // The pod's own settings were judged at its CREATE and an ephemeral-container UPDATE
    // cannot change them.
    if (ctx.request != nullptr && ctx.request->ephemeral_update) return;
    if (with_gpu.empty()) check_runtime_class(pod, *ctx.policy, out);
    check_cdi_annotations(pod, !with_gpu.empty(), out);
  }

 private:
  static std::string who_requests_none(const ContainerRef& ref, const std::string& with_gpu) {
    std::string who = container_label(ref) + " requests no GPU";
    if (!with_gpu.empty()) who += " (the pod's GPUs go to " + with_gpu + ", not to it)";
    return who;
  }

  static std::string env_message(const Subject& s, const std::string& what) {
    if (s.gets_gpus)
      return s.who + " but " + what + "; " + std::string(kReplacesAllocation) + ": remove it";
    return s.who + " but " + what + "; NVIDIA's container runtime exposes the GPUs it names: " +
           std::string(kRequestInstead) + ", or set it to void";
  }

  static void check_env(const PodView& pod, const Subject& s, std::vector<Violation>& out) {
    const Json* env = find_member(pod.container(*s.ref), "env");
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
        continue;  // unset, "", void or none: no device (on a GPU container: not even its own)
      } else {
        what = "sets NVIDIA_VISIBLE_DEVICES to " + json_text(*value);
      }
      out.push_back(
          Violation{env_message(s, what), s.ref->path + ".env[" + std::to_string(i) + "]"});
    }
  }

  // envFrom: the keys of a ConfigMap or Secret are unknown at admission, and the tenant may
  // write both. `env` takes precedence over `envFrom` (kubelet makeEnvironmentVariables), so a
  // container that requests no GPU is safe once its env names the variable (with `fix` the
  // mutation writes void: judged so even on a template gpuadmit does not patch); one that
  // requests GPUs has no value that keeps its allocation, so only a prefix that cannot spell
  // NVIDIA_VISIBLE_DEVICES makes envFrom safe there.
  static void check_env_from(const PodView& pod, const Subject& s, bool hidden_by_mutation,
                             std::vector<Violation>& out) {
    const Json& container = pod.container(*s.ref);
    const Json* from = find_member(container, "envFrom");
    if (from == nullptr || !from->is_array()) return;
    if (!s.gets_gpus && (hidden_by_mutation || env_names_visible_devices(container))) return;
    for (size_t i = 0; i < from->size(); ++i) {
      const Json& source = (*from)[i];
      if (!source.is_object() || !env_from_may_set_visible_devices(string_member(source, "prefix")))
        continue;
      const std::string at = "envFrom[" + std::to_string(i) + "]";
      const std::string what = "takes its environment from " + at + env_source(source) +
                               ", which may set NVIDIA_VISIBLE_DEVICES and gpuadmit cannot check";
      const std::string remedy =
          s.gets_gpus ? std::string(kReplacesAllocation) +
                            ": name the variables it needs in env, or give envFrom a prefix"
                      : "NVIDIA's container runtime exposes the GPUs it names: " +
                            std::string(kRequestInstead) +
                            ", or set NVIDIA_VISIBLE_DEVICES to void in env, which takes "
                            "precedence over envFrom";
      out.push_back(Violation{s.who + " but " + what + "; " + remedy, s.ref->path + "." + at});
    }
  }

  static bool env_names_visible_devices(const Json& container) {
    const Json* env = find_member(container, "env");
    if (env == nullptr || !env->is_array()) return false;
    return std::any_of(env->begin(), env->end(), [](const Json& entry) {
      return string_member(entry, "name") == kVisibleDevicesEnv;
    });
  }

  // " (configMapRef gpu-env)", " (secretRef s)", or "" for a source of neither kind.
  static std::string env_source(const Json& source) {
    for (const std::string_view kind : {"configMapRef", "secretRef"}) {
      if (const Json* ref = find_member(source, kind); ref != nullptr && ref->is_object())
        return " (" + std::string(kind) + " " + std::string(string_member(*ref, "name")) + ")";
    }
    return "";
  }

  // The device-list folder on every container (the toolkit adds what it names to the
  // allocation); hostPath device nodes on one that requests no GPU (a container that requests
  // GPUs is given their nodes by the runtime, and an unprivileged container cannot open the node
  // of a GPU not allocated to it: docs/rules.md GPU024).
  static void check_mounts(const PodView& pod, const Subject& s, std::vector<Violation>& out) {
    const Json* mounts = find_member(pod.container(*s.ref), "volumeMounts");
    if (mounts == nullptr || !mounts->is_array()) return;
    for (size_t i = 0; i < mounts->size(); ++i) {
      const Json& mount = (*mounts)[i];
      const std::string path = s.ref->path + ".volumeMounts[" + std::to_string(i) + "]";
      const std::string_view written_path = string_member(mount, "mountPath");
      if (names_devices_as_mount(written_path)) {
        out.push_back(Violation{device_list_message(s, written_path), path});
        continue;
      }
      if (s.gets_gpus) continue;
      const std::string node_path = host_path_of(pod.spec(), mount);
      if (node_path.empty() || !reaches_gpu_devices(node_path)) continue;
      out.push_back(Violation{
          s.who + " but mounts the node's " + node_path + " through hostPath volume " +
              std::string(string_member(mount, "name")) + ", which holds GPU device nodes; " +
              std::string(kRequestInstead) + " of mounting device nodes",
          path});
    }
  }

  static std::string device_list_message(const Subject& s, std::string_view written_path) {
    const std::string cleaned = toolkit_mount_path(written_path);
    std::string at(written_path);
    if (at != cleaned) at += " (" + cleaned + " once cleaned)";
    const std::string what =
        "mounts a volume at " + at +
        ", which NVIDIA's container runtime reads as a list of GPUs to expose "
        "(accept-nvidia-visible-devices-as-volume-mounts: every path that starts with " +
        std::string(kDeviceListMountRoot) + ")";
    if (s.gets_gpus)
      return s.who + " but " + what +
             " beside the ones allocated to it; mount it "
             "elsewhere";
    return s.who + " but " + what + "; " + std::string(kRequestInstead) +
           ", and mount it elsewhere";
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
  // passes the pod's annotations to the container (containerd's pod_annotations, CRI-O's
  // allowed_annotations) lets NVIDIA's runtime read them — it takes the OCI spec's annotations
  // under cdi.k8s.io/ as device requests before anything else (cuda_image.go VisibleDevices,
  // annotation-prefixes) — and injects those devices, beside any the pod requested. The device
  // plugin and DRA drivers name devices through the kubelet (container annotations, CDI devices
  // of the CRI), never through the pod's metadata: no pod has a reason to carry one.
  static void check_cdi_annotations(const PodView& pod, bool gpu_pod, std::vector<Violation>& out) {
    const Json* metadata = pod.metadata();
    const Json* annotations = metadata != nullptr ? find_member(*metadata, "annotations") : nullptr;
    if (annotations == nullptr || !annotations->is_object()) return;
    const std::string base = dotted_path(pod.location().metadata) + ".annotations";
    for (auto it = annotations->begin(); it != annotations->end(); ++it) {
      if (it.key().rfind("cdi.k8s.io/", 0) != 0) continue;
      const std::string asks = "annotation " + it.key() +
                               " asks the container runtime for CDI devices (" +
                               json_text(it.value()) + ")";
      out.push_back(Violation{
          gpu_pod ? asks + " beyond the GPUs its containers request (only the device plugin or a "
                           "DRA driver names devices); remove the annotation"
                  : asks + ", but no container of the pod requests a GPU; request the GPUs the "
                           "pod needs (resources.limits[\"nvidia.com/gpu\"]), or remove the "
                           "annotation",
          base + "[\"" + it.key() + "\"]"});
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_gpu_visibility_rule() {
  return std::make_unique<GpuVisibilityRule>();
}

}  // namespace gpuadmit
