#include "rules/dra_admin_access.h"

#include "rules/claim_rule_support.h"

namespace gpuadmit {
namespace {

using namespace claim_rules;

// adminAccess: true grants access to devices already allocated to other claims
// (k8s.io/api/resource/v1 types.go ExactDeviceRequest.AdminAccess: "privileged access to the
// device ... even if they are already in use"; KEP-5018 limits it to namespaces labelled
// resource.kubernetes.io/admin-access). On GPUs that is another tenant's memory and workload: a
// security rule. Denied unless the tenant's `dra.adminAccess` is true; a namespace of no tenant
// is never allowed.
class DraAdminAccessRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU021"; }
  std::string_view name() const override { return "DraAdminAccessAllowed"; }
  std::string_view summary() const override {
    return "adminAccess on a GPU DeviceClass needs the tenant's explicit dra.adminAccess";
  }
  Action default_action() const override { return Action::kDeny; }
  void check(const PodView&, const PodContext&, std::vector<Violation>&) const override {}

  void check_claim(const Json&, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    if (ctx.tenant != nullptr && ctx.tenant->dra.admin_access) return;
    for_each_gpu_request(
        ctx, [&](const DraRequest& r, const GpuClass& c, const DeviceClassMapping&) {
          if (!r.admin_access) return;
          out.push_back(Violation{
              request_label(ctx, r) + " has adminAccess: it would reach GPUs of class " + c.name +
                  " that other pods are using, which " + tenant_text(ctx) +
                  " is not allowed to; remove adminAccess, or allow it explicitly with the " +
                  "tenant's dra.adminAccess",
              r.path + ".adminAccess"});
        });
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_admin_access_rule() {
  return std::make_unique<DraAdminAccessRule>();
}

}  // namespace gpuadmit
