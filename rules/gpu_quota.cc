#include "rules/gpu_quota.h"

#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// A pod whose own GPU request exceeds the namespace's whole GPU quota can never be admitted by
// the ResourceQuota gpuadmit renders for the tenant (requests.nvidia.com/gpu); with a template it
// would leave its controller retrying forever ("exceeded quota"). The quota admission plugin
// charges a pod its effective request (k8s.io/component-helpers resource.PodRequests), counted
// here the same way. Per pod only: lint sums replicas × per-pod GPUs of a namespace's workloads
// separately (GPU013 in lint/).
class GpuQuotaRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU013"; }
  std::string_view name() const override { return "GpuQuota"; }
  std::string_view summary() const override {
    return "a pod's GPUs must not exceed the tenant's quota.gpus";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    // A namespace of no tenant has no quota to check: GPU003 denies its GPU pods (a policy that
    // turns GPU003 off for it lets them run unlimited, its own choice).
    if (!ctx.gpu_pod || ctx.tenant == nullptr || !ctx.tenant->quota_gpus) return;
    const int64_t quota = *ctx.tenant->quota_gpus;
    const GpuResources gpu(pod, ctx);
    if (pod_gpu_total(pod, *gpu) + pod_claim_units(ctx) <= quota) return;
    const PodGpuCount count = with_claims(pod_gpu_count(pod, *gpu), ctx);
    out.push_back(Violation{"pod requests " + std::to_string(count.total) + " GPUs (" +
                                count.breakdown + "), more than the GPU quota " +
                                std::to_string(quota) + " of tenant " + ctx.tenant->name +
                                "; it could never start: request at most " + std::to_string(quota) +
                                " GPUs, or ask for a larger quota",
                            pod.location().path, policy_path::tenant(*ctx.tenant) + ".quota.gpus"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_gpu_quota_rule() { return std::make_unique<GpuQuotaRule>(); }

}  // namespace gpuadmit
