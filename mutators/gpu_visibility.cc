#include "mutators/gpu_visibility.h"

#include "engine/controllers.h"
#include "engine/gpu_visibility.h"
#include "engine/resources.h"
#include "mutators/mutator_support.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// With NVIDIA's runtime as the node's default, the runtime exposes the GPUs named by the
// container's NVIDIA_VISIBLE_DEVICES — and every CUDA base image sets it to `all` in its
// environment, so a container that requests no GPU sees every GPU of the node
// (k8s-device-plugin issues #61, #87, #195, #548, #1605). A variable in the container's `env`
// overrides the image's (the CRI runtime appends it after the image's environment), so every
// container that requests no GPU — init, sidecar and ephemeral containers included, in GPU and
// non-GPU pods — gets NVIDIA_VISIBLE_DEVICES=void appended to its `env`, unless its `env` already
// names the variable (GPU024 judges the value). `env` entries also take precedence over
// `envFrom`, so a ConfigMap that carries the variable is overridden too.
// The same on CREATE and on an UPDATE that changed a template: a template of a workload created
// before gpuadmit gets it with the change that rolls it out anyway, and its controller's copies
// are never mutated (engine/controllers.h), so they stay equal to it. An ephemeral container
// added by `kubectl debug` (pods/ephemeralcontainers) gets it too.
class GpuVisibilityMutator final : public Mutator {
 public:
  std::string_view name() const override { return "gpu-visibility"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.policy->policy().enforcement.gpu_visibility == Action::kFix &&
           !runs_on_every_node(ctx);
  }

  bool evaluates_added_ephemeral_containers() const override { return true; }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      bool changed = false;
      const std::vector<ContainerRef>& containers = pod.containers();
      const PodGpuResources gpu(pod.view(), *ctx.policy);
      for (size_t i = 0; i < containers.size(); ++i) {
        if (!in_scope(ctx.request, containers[i])) continue;
        if (container_may_get_gpus(pod.view(), i, gpu, ctx.dra)) continue;
        changed |= hide_gpus(pod.container(containers[i], ContainerMember::kEnv));
      }
      return changed;
    });
  }

 private:
  static bool hide_gpus(WritableMember env_member) {
    Json* env = env_member.array();    // created (or a null replaced) when absent
    if (env == nullptr) return false;  // not a list: the API server rejects it
    for (const Json& entry : *env) {
      if (string_member(entry, "name") == kVisibleDevicesEnv) return false;
    }
    Json entry = empty_object();
    entry["name"] = std::string(kVisibleDevicesEnv);
    entry["value"] = std::string(kNoVisibleDevices);
    env->push_back(std::move(entry));
    return true;
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_gpu_visibility_mutator() {
  return std::make_unique<GpuVisibilityMutator>();
}

}  // namespace gpuadmit
