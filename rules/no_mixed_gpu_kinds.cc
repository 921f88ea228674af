#include "rules/no_mixed_gpu_kinds.h"

#include <array>

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// Whole GPUs, time-sliced shared GPUs and MIG slices come from differently configured nodes (a
// node's device plugin advertises either replicas or MIG devices or whole GPUs of one physical
// GPU), so one container asking for two kinds is either unschedulable or a mistake. Several MIG
// profiles in one container are allowed: the mixed strategy advertises them side by side.
class NoMixedGpuKindsRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU008"; }
  std::string_view name() const override { return "NoMixedGpuKinds"; }
  std::string_view summary() const override {
    return "one container must not mix whole GPUs, shared GPUs and MIG slices";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    const GpuResources gpu(pod, ctx);
    const std::vector<ContainerRef>& containers = pod.containers();
    for (size_t i = 0; i < containers.size(); ++i) {
      const ContainerRef& ref = containers[i];
      // A mix needs two positive resources: most containers have one at most.
      size_t positive = 0;
      for (const ContainerGpuResource& r : gpu->of(i))
        positive += is_positive(r.effective_quantity());
      if (positive < 2) continue;
      // Per kind, in the order whole, shared, MIG: "nvidia.com/gpu 1, amd.com/gpu 1".
      std::array<std::vector<std::string>, 3> by_kind;
      for (const ContainerGpuResource& r : gpu->of(i)) {
        if (!is_positive(r.effective_quantity())) continue;
        by_kind[static_cast<size_t>(gpu_kind(r.resource))].push_back(r.resource + " " +
                                                                     written(*r.effective()));
      }
      std::vector<std::string> parts;
      for (GpuKind kind : {GpuKind::kWhole, GpuKind::kShared, GpuKind::kMig}) {
        const auto& items = by_kind[static_cast<size_t>(kind)];
        if (!items.empty()) {
          parts.push_back(std::string(gpu_kind_name(kind)) + " (" + join(items) + ")");
        }
      }
      if (parts.size() < 2) continue;
      std::string mix = parts[0];
      for (size_t i = 1; i < parts.size(); ++i) {
        mix += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
      }
      out.push_back(
          Violation{container_label(ref) + ": mixes " + mix + "; ask for one kind per container",
                    ref.path + ".resources"});
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_no_mixed_gpu_kinds_rule() {
  return std::make_unique<NoMixedGpuKindsRule>();
}

}  // namespace gpuadmit
