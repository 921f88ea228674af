#include "rules/dra_count_limits.h"

#include "rules/claim_rule_support.h"

namespace gpuadmit {
namespace {

using namespace claim_rules;

// GPU005 for the claim itself: a claim is allocated for the pods that use it, so a claim that
// asks for more GPU units than maxGPUsPerPod can only be used by a pod GPU005 denies; a
// request above maxGPUsPerContainer only by a container GPU005 denies. Denied at the claim,
// where the count is written. Units: ceil(count / devicesPerGPU) (engine/dra.h).
class DraCountLimitsRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU019"; }
  std::string_view name() const override { return "DraGpuCountLimits"; }
  std::string_view summary() const override {
    return "a DRA claim's GPUs must be within the tenant's maxGPUsPerPod, and each request "
           "within maxGPUsPerContainer";
  }
  Action default_action() const override { return Action::kDeny; }
  void check(const PodView&, const PodContext&, std::vector<Violation>&) const override {}

  void check_claim(const Json&, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    if (ctx.tenant == nullptr || ctx.requests == nullptr) return;
    const TenantLimits& limits = ctx.tenant->limits;
    if (limits.max_gpus_per_container) {
      const int64_t max = *limits.max_gpus_per_container;
      for_each_gpu_request(
          ctx, [&](const DraRequest& r, const GpuClass&, const DeviceClassMapping&) {
            const int64_t units = request_gpu_units(r, *ctx.policy);
            if (r.all || units <= max) return;  // All: GPU020's business
            out.push_back(Violation{request_label(ctx, r) + " asks for " + std::to_string(units) +
                                        " GPUs (count " + std::to_string(r.count) +
                                        "), more than maxGPUsPerContainer " + std::to_string(max) +
                                        " of tenant " + ctx.tenant->name + "; lower the count to " +
                                        "at most " + std::to_string(max),
                                    r.path + ".count"});
          });
    }
    if (limits.max_gpus_per_pod) {
      const int64_t max = *limits.max_gpus_per_pod;
      const int64_t units = claim_gpu_units(*ctx.requests, *ctx.policy);
      if (units > max) {
        out.push_back(Violation{std::string(ctx.kind) + " asks for " + std::to_string(units) +
                                    " GPUs, more than maxGPUsPerPod " + std::to_string(max) +
                                    " of tenant " + ctx.tenant->name +
                                    "; a pod using it could never be admitted: ask for at most " +
                                    std::to_string(max),
                                std::string(ctx.spec_path)});
      }
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_count_limits_rule() {
  return std::make_unique<DraCountLimitsRule>();
}

}  // namespace gpuadmit
