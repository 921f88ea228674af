#include "rules/privileged_container.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/controllers.h"
#include "engine/gpu_visibility.h"
#include "engine/resources.h"
#include "engine/scheduling.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// A privileged container gets every device node of its node from the container runtime —
// containerd adds all host devices unless the runtime handler sets
// privileged_without_host_devices (default false; pkg/cri/config Runtime), CRI-O likewise
// (specAddHostDevicesIfPrivileged) — so /dev/nvidia* of every GPU is there, whatever the device
// plugin allocated. NVIDIA's runtime hook also honours NVIDIA_VISIBLE_DEVICES (`all` in every
// CUDA image) for privileged containers even where
// accept-nvidia-visible-devices-envvar-when-unprivileged = false hardens the node
// (nvidia-container-toolkit cmd/nvidia-container-runtime-hook getDevices: `if privileged ||
// AcceptEnvvarUnprivileged`). The gpu-visibility mutation's NVIDIA_VISIBLE_DEVICES=void cannot
// help either: the devices come from the runtime, not the hook. Seen in kubernetes#81256 and
// k8s-device-plugin#336: a privileged pod asking for 1 or 2 GPUs lists all of them.
bool privileged(const Json& container) {
  const Json* security = find_member(container, "securityContext");
  const Json* flag = security != nullptr ? find_member(*security, "privileged") : nullptr;
  return flag != nullptr && flag->is_boolean() && flag->get<bool>();
}

// A pod without GPUs sees none unless it can run on a GPU pool's nodes: some class whose every
// NoSchedule and NoExecute taint it tolerates (Toleration.ToleratesTaint; PreferNoSchedule keeps
// nobody off, engine/scheduling.h keeps_pods_off; a class without taints admits anyone). Where
// the pools are tainted, a privileged CI runner that tolerates nothing never gets there.
bool may_run_on_gpu_nodes(const PodView& pod, const CompiledPolicy& policy) {
  const Json* tolerations = find_member(pod.spec(), "tolerations");
  const std::vector<GpuClass>& classes = policy.policy().classes;
  return std::any_of(classes.begin(), classes.end(), [&](const GpuClass& c) {
    return std::all_of(c.taints.begin(), c.taints.end(), [&](const Taint& t) {
      return !keeps_pods_off(t) || any_tolerates(tolerations, t);
    });
  });
}

constexpr std::string_view kInstead =
    "drop privileged and grant only the capabilities it needs (securityContext.capabilities.add)";

class PrivilegedContainerRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU026"; }
  std::string_view name() const override { return "NoPrivilegedContainerOnGpuNodes"; }
  std::string_view summary() const override {
    return "a privileged container sees every GPU of its node, whatever it requests: no "
           "privileged container in a pod that can run on a GPU pool";
  }
  Action default_action() const override { return Action::kDeny; }

  // Also the ephemeral containers `kubectl debug --profile=sysadmin` adds (privileged) through
  // pods/ephemeralcontainers.
  bool evaluates_added_ephemeral_containers() const override { return true; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    // Node agents (device plugin, DCGM): DaemonSets in the policy's nodeAgents namespaces.
    if (runs_on_every_node(ctx)) return;
    const CompiledPolicy& policy = *ctx.policy;
    const std::vector<ContainerRef>& containers = pod.containers();
    std::vector<size_t> flagged;
    for (size_t i = 0; i < containers.size(); ++i) {
      if (privileged(pod.container(containers[i])) && in_scope(ctx.request, containers[i])) {
        flagged.push_back(i);
      }
    }
    if (flagged.empty()) return;
    // A GPU pod runs on a GPU node: all its privileged containers see every GPU there.
    if (!ctx.gpu_pod && !may_run_on_gpu_nodes(pod, policy)) return;
    const GpuResources gpu(pod, ctx);
    for (size_t i : flagged) {
      const ContainerRef* ref = &containers[i];
      const std::string who = container_label(*ref);
      std::string what;
      if (container_may_get_gpus(pod, i, *gpu, ctx.dra)) {
        what = who +
               " is privileged, so it sees every GPU of its node, not only those allocated to "
               "it: the container runtime gives a privileged container every device node";
      } else {
        what = who +
               " requests no GPU but is privileged, so it sees every GPU of the node it runs "
               "on: the container runtime gives a privileged container every device node, and "
               "NVIDIA_VISIBLE_DEVICES=void cannot hide them";
      }
      out.push_back(
          Violation{what + "; " + std::string(kInstead) +
                        ", or run a node agent as a DaemonSet in one of the policy's nodeAgents "
                        "namespaces",
                    ref->path + ".securityContext.privileged"});
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_privileged_container_rule() {
  return std::make_unique<PrivilegedContainerRule>();
}

}  // namespace gpuadmit
