#include "rules/allowed_classes.h"

#include <algorithm>

#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// A tenant's allowedClasses: unset allows every class of the policy, an empty list allows no
// GPUs at all (SPEC §3). A namespace that matches no tenant (and is not exempt) may not use GPUs
// at all: every GPU of the fleet belongs to some tenant's budget, and a namespace the platform
// team never assigned is not one (docs/decisions.md, "Namespaces of no tenant"); a last tenant
// with namespaces [".*"] is the policy's way to give every other namespace GPUs. A class name
// the policy does not know is GPU004's.
Violation no_tenant(const PodView& pod, const PodContext& ctx) {
  const std::string ns = ctx.request != nullptr ? ctx.request->ns : "";
  return Violation{"namespace " + ns +
                       " belongs to no tenant of the policy; it may not use GPUs: ask the "
                       "platform team for a tenant whose namespaces match it, or a catch-all "
                       "tenant (namespaces: [\".*\"]) last in spec.tenants",
                   pod.location().path, "spec.tenants"};
}

// KEP-5004's implicit extended resource (`deviceclass.resource.kubernetes.io/<DeviceClass>`)
// reaches a DeviceClass with no claim the claim rules could judge: kube-scheduler creates it
// (docs/dra.md, "The scheduler's claims"). The class that DeviceClass belongs to must be allowed
// too, whatever class the pod resolved to.
void check_implicit_device_classes(const PodView& pod, const PodContext& ctx,
                                   const std::vector<std::string>& allowed,
                                   std::vector<Violation>& out) {
  const GpuResources gpu(pod, ctx);
  for_each_gpu_resource(pod, *gpu, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
    if (!is_positive(r.effective_quantity())) return;
    const GpuClass* c = ctx.policy->implicit_device_class(r.resource).gpu_class;
    if (c == nullptr || contains(allowed, c->name)) return;
    out.push_back(
        Violation{container_label(ref) + " asks for " + r.resource + ", devices of class " +
                      c->name + ", which tenant " + ctx.tenant->name +
                      " may not use; use a DeviceClass of one of: " + join(allowed),
                  ref.path + ".resources", policy_path::tenant(*ctx.tenant) + ".allowedClasses"});
  });
}

class AllowedClassesRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU003"; }
  std::string_view name() const override { return "AllowedGpuClass"; }
  std::string_view summary() const override {
    return "the tenant must allow the pod's GPU class (an empty allowedClasses allows no GPUs)";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod) return;
    if (ctx.tenant == nullptr) {
      out.push_back(no_tenant(pod, ctx));
      return;
    }
    if (!ctx.tenant->allowed_classes) return;
    const std::vector<std::string>& allowed = *ctx.tenant->allowed_classes;
    const std::string& tenant = ctx.tenant->name;
    if (allowed.empty()) {
      out.push_back(Violation{"tenant " + tenant +
                                  " may not use GPUs (its allowedClasses is empty); remove the "
                                  "GPU requests, or ask the platform team to allow a class",
                              pod.location().path,
                              policy_path::tenant(*ctx.tenant) + ".allowedClasses"});
      return;
    }
    check_implicit_device_classes(pod, ctx, allowed, out);
    if (ctx.class_name.empty()) {
      // No class resolved: the pod would not be steered to any pool the tenant may use.
      out.push_back(Violation{
          "no GPU class resolved for this pod; set gpuadmit.io/class to one "
          "of the classes tenant " +
              tenant + " may use: " + join(allowed),
          setting_path(pod, kClassKey), policy_path::tenant(*ctx.tenant) + ".allowedClasses"});
      return;
    }
    if (ctx.gpu_class == nullptr) return;  // unknown class: GPU004
    if (std::find(allowed.begin(), allowed.end(), ctx.class_name) != allowed.end()) return;
    out.push_back(Violation{"class " + ctx.class_name + " is not allowed for tenant " + tenant +
                                "; set gpuadmit.io/class to one of: " + join(allowed),
                            setting_path(pod, kClassKey),
                            policy_path::tenant(*ctx.tenant) + ".allowedClasses"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_allowed_classes_rule() {
  return std::make_unique<AllowedClassesRule>();
}

}  // namespace gpuadmit
