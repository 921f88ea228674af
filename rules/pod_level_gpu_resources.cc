#include "rules/pod_level_gpu_resources.h"

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// Pod-level resources (KEP-2837, PodLevelResources, alpha in 1.32, beta in 1.34) support only
// cpu, memory and hugepages; the API server rejects anything else with "must be a supported
// resource name" or "Unsupported value", which says nothing about where GPUs belong. Every GPU
// resource there is reported, zero included: the API server rejects those too.
class PodLevelGpuResourcesRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU015"; }
  std::string_view name() const override { return "NoPodLevelGpuResources"; }
  std::string_view summary() const override {
    return "GPUs must be requested in the containers' resources, not in pod-level spec.resources";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    const Json* resources = find_member(pod.spec(), "resources");
    if (resources == nullptr) return;
    const std::string path = pod.location().path + ".resources";
    for (std::string_view section : {"requests", "limits"}) {
      const Json* s = find_member(*resources, section);
      if (s == nullptr || !s->is_object()) continue;
      for (auto it = s->begin(); it != s->end(); ++it) {
        if (it.value().is_null() || !ctx.policy->is_gpu_resource(it.key())) continue;
        out.push_back(
            Violation{"pod-level resources." + std::string(section) + " has " + it.key() + " " +
                          written(it.value()) +
                          ": Kubernetes takes only cpu, memory and hugepages at pod level; move " +
                          it.key() + " into the resources of the container that uses the GPU",
                      path + "." + std::string(section) + "[\"" + it.key() + "\"]"});
      }
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_pod_level_gpu_resources_rule() {
  return std::make_unique<PodLevelGpuResourcesRule>();
}

}  // namespace gpuadmit
