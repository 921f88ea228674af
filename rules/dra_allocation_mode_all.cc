#include "rules/dra_allocation_mode_all.h"

#include "rules/claim_rule_support.h"

namespace gpuadmit {
namespace {

using namespace claim_rules;

// allocationMode: All allocates every matching device of a node (k8s.io/api/resource/v1
// types.go DeviceAllocationModeAll: "all devices matching the selectors ... on a single node"):
// one pod takes a whole GPU node, whatever its count limits say. Denied unless the tenant's
// `dra.allocationModeAll` is true.
class DraAllocationModeAllRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU020"; }
  std::string_view name() const override { return "DraNoAllocateAll"; }
  std::string_view summary() const override {
    return "allocationMode: All on a GPU DeviceClass needs the tenant's dra.allocationModeAll";
  }
  Action default_action() const override { return Action::kDeny; }
  void check(const PodView&, const PodContext&, std::vector<Violation>&) const override {}

  void check_claim(const Json&, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    if (ctx.tenant != nullptr && ctx.tenant->dra.allocation_mode_all) return;
    for_each_gpu_request(ctx, [&](const DraRequest& r, const GpuClass& c,
                                  const DeviceClassMapping&) {
      if (!r.all) return;
      out.push_back(Violation{
          request_label(ctx, r) + " has allocationMode All: every matching GPU of a node of " +
              "class " + c.name + ", which " + tenant_text(ctx) +
              " may not ask for; use allocationMode ExactCount with a count, or allow it with " +
              "the tenant's dra.allocationModeAll",
          r.path + ".allocationMode"});
    });
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_allocation_mode_all_rule() {
  return std::make_unique<DraAllocationModeAllRule>();
}

}  // namespace gpuadmit
