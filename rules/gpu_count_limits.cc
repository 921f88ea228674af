#include "rules/gpu_count_limits.h"

#include "engine/resources.h"
#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// The tenant's limits.maxGPUsPerContainer / maxGPUsPerPod, over GPU units of every kind (whole,
// shared or MIG; SPEC §4.6 counts them the same way). The pod total is the scheduler's
// effective request (k8s.io/component-helpers resource.PodRequests): the larger of the app
// containers plus restartable init sidecars, and each init container plus the sidecars started
// before it; init containers run one at a time, so they do not add up.
class GpuCountLimitsRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU005"; }
  std::string_view name() const override { return "GpuCountLimits"; }
  std::string_view summary() const override {
    return "at most the tenant's maxGPUsPerContainer per container and maxGPUsPerPod per pod "
           "(effective pod request)";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    // A namespace of no tenant has no limits to check: GPU003 denies its GPU pods (a policy that
    // turns GPU003 off for it lets them run unlimited, its own choice).
    if (!ctx.gpu_pod || ctx.tenant == nullptr) return;
    const TenantLimits& limits = ctx.tenant->limits;
    const std::string& tenant = ctx.tenant->name;
    const GpuResources gpu(pod, ctx);
    if (limits.max_gpus_per_container) {
      const int64_t max = *limits.max_gpus_per_container;
      const std::vector<ContainerRef>& containers = pod.containers();
      for (size_t i = 0; i < containers.size(); ++i) {
        const ContainerRef& ref = containers[i];
        const int64_t n = gpu->units(i) + claim_units(ctx, i);
        if (n <= max) continue;
        std::string what = resources_text(gpu->of(i));
        if (const std::string claims = container_claims_text(ctx, i); !claims.empty()) {
          what += (what.empty() ? "" : ", ") + claims;
        }
        out.push_back(Violation{container_label(ref) + ": " + std::to_string(n) + " GPUs (" + what +
                                    ") exceed maxGPUsPerContainer " + std::to_string(max) +
                                    " of tenant " + tenant + "; request at most " +
                                    std::to_string(max) + " per container",
                                ref.path + ".resources",
                                policy_path::tenant(*ctx.tenant) + ".limits.maxGPUsPerContainer"});
      }
    }
    if (limits.max_gpus_per_pod) {
      const int64_t max = *limits.max_gpus_per_pod;
      if (pod_gpu_total(pod, *gpu) + pod_claim_units(ctx) > max) {
        const PodGpuCount count = with_claims(pod_gpu_count(pod, *gpu), ctx);
        out.push_back(Violation{
            "pod requests " + std::to_string(count.total) + " GPUs (" + count.breakdown +
                "), more than maxGPUsPerPod " + std::to_string(max) + " of tenant " + tenant +
                "; request at most " + std::to_string(max) +
                " per pod, or split the work across pods",
            pod.location().path, policy_path::tenant(*ctx.tenant) + ".limits.maxGPUsPerPod"});
      }
    }
  }

 private:
  // "nvidia.com/gpu 16" or "nvidia.com/mig-1g.10gb 4, nvidia.com/gpu 1": the positive amounts.
  static std::string resources_text(std::span<const ContainerGpuResource> resources) {
    std::vector<std::string> items;
    for (const ContainerGpuResource& r : resources) {
      if (is_positive(r.effective_quantity())) {
        items.push_back(r.resource + " " + written(*r.effective()));
      }
    }
    return join(items);
  }
};

}  // namespace

std::unique_ptr<const Rule> make_gpu_count_limits_rule() {
  return std::make_unique<GpuCountLimitsRule>();
}

}  // namespace gpuadmit
