#include "rules/dra_device_class.h"

#include <algorithm>

#include "rules/claim_rule_support.h"

namespace gpuadmit {
namespace {

using namespace claim_rules;

// GPU003 for DRA: a ResourceClaim(Template) whose request names a DeviceClass of a class the
// tenant may not use would hand the tenant GPUs of that pool, whatever pod later uses it. A
// DeviceClass the policy does not map is not a GPU (NICs, FPGAs): left alone.
class DraDeviceClassRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU018"; }
  std::string_view name() const override { return "DraAllowedDeviceClass"; }
  std::string_view summary() const override {
    return "a DRA claim's GPU DeviceClass must belong to a class the tenant may use";
  }
  Action default_action() const override { return Action::kDeny; }
  void check(const PodView&, const PodContext&, std::vector<Violation>&) const override {}

  void check_claim(const Json&, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    if (ctx.tenant == nullptr || !ctx.tenant->allowed_classes) return;
    const std::vector<std::string>& allowed = *ctx.tenant->allowed_classes;
    for_each_gpu_request(
        ctx, [&](const DraRequest& r, const GpuClass& c, const DeviceClassMapping&) {
          if (std::find(allowed.begin(), allowed.end(), c.name) != allowed.end()) return;
          std::string list;
          for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
          out.push_back(Violation{
              request_label(ctx, r) + " hands out GPUs of class " + c.name + ", which tenant " +
                  ctx.tenant->name + " may not use" +
                  (allowed.empty() ? " (the tenant may use no GPUs)"
                                   : "; use a DeviceClass of an allowed class (" + list + ")"),
              r.path + ".deviceClassName"});
        });
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_device_class_rule() {
  return std::make_unique<DraDeviceClassRule>();
}

}  // namespace gpuadmit
