#include "rules/mig_profile.h"

#include <algorithm>

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// MIG (SPEC §2, §4.3): a pod asks for a slice with gpuadmit.io/mig-profile (renamed to
// nvidia.com/mig-<profile> on a mixed-strategy class before rules run) or with an explicit
// nvidia.com/mig-<profile> resource. The profile must be one the class's nodes are partitioned
// into, or the pod stays Pending ("Insufficient nvidia.com/mig-2g.10gb"). On a class that is not
// MIG-partitioned no node offers MIG devices at all. On a single-strategy class the device plugin
// advertises MIG devices as nvidia.com/gpu (NVIDIA k8s-device-plugin, MIG strategy "single"), so
// an explicit nvidia.com/mig-* resource can never be satisfied there either.
class MigProfileRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU007"; }
  std::string_view name() const override { return "AllowedMigProfile"; }
  std::string_view summary() const override {
    return "a MIG profile must be one of the class's mig.profiles; MIG on a non-MIG class is "
           "denied";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr) return;
    const GpuClass& c = *ctx.gpu_class;
    const std::string& profile = ctx.mig_profile;
    if (!c.mig) {
      const std::string choose = mig_classes_hint(*ctx.policy);
      if (!profile.empty()) {
        out.push_back(Violation{"class " + c.name + " is not MIG-partitioned: remove " +
                                    "gpuadmit.io/mig-profile " + profile + choose,
                                setting_path(pod, kMigProfileKey)});
      }
      for_each_mig_resource(pod, ctx, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
        out.push_back(Violation{container_label(ref) + ": " + r.resource + " " +
                                    written(*r.effective()) + " asks for a MIG slice, but class " +
                                    c.name + " is not MIG-partitioned; ask for " +
                                    std::string(kGpuResource) + " instead" + choose,
                                path_of(ref, r)});
      });
      return;
    }
    const std::vector<std::string>& profiles = c.mig->profiles;
    const bool profile_unknown = !profile.empty() && !contains(profiles, profile);
    if (profile_unknown) {
      out.push_back(Violation{"gpuadmit.io/mig-profile " + profile +
                                  " is not a MIG profile of class " + c.name +
                                  "; use one of: " + join(profiles),
                              setting_path(pod, kMigProfileKey)});
    }
    const bool single = c.mig->strategy == MigConfig::Strategy::kSingle;
    for_each_mig_resource(pod, ctx, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
      const std::string resource_profile = mig_profile_of_resource(r.resource).value_or("");
      const std::string head =
          container_label(ref) + ": " + r.resource + " " + written(*r.effective());
      if (single) {
        out.push_back(Violation{head + ": class " + c.name +
                                    " uses the MIG single strategy, whose nodes offer MIG "
                                    "devices as " +
                                    std::string(kGpuResource) + "; ask for " +
                                    std::string(kGpuResource) + " with gpuadmit.io/mig-profile " +
                                    resource_profile,
                                path_of(ref, r)});
        return;
      }
      if (contains(profiles, resource_profile)) return;
      if (profile_unknown && resource_profile == profile) return;  // reported once, above
      std::vector<std::string> names;
      for (const std::string& p : profiles) names.push_back(mig_resource_name(p));
      out.push_back(Violation{
          head + " is not a MIG profile of class " + c.name + "; use one of: " + join(names),
          path_of(ref, r)});
    });
  }

 private:
  template <typename F>
  static void for_each_mig_resource(const PodView& pod, const PodContext& ctx, F each) {
    const GpuResources gpu(pod, ctx);
    for_each_gpu_resource(pod, *gpu, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
      if (gpu_kind(r.resource) == GpuKind::kMig && is_positive(r.effective_quantity()))
        each(ref, r);
    });
  }

  static std::string path_of(const ContainerRef& ref, const ContainerGpuResource& r) {
    return resource_path(ref, r.request != nullptr ? "requests" : "limits", r.resource);
  }

  // ", or choose a MIG class (a100, h100)", or a note that the policy has none.
  static std::string mig_classes_hint(const CompiledPolicy& policy) {
    std::vector<std::string> names;
    for (const GpuClass& c : policy.policy().classes) {
      if (c.mig) names.push_back(c.name);
    }
    if (names.empty()) return " (the policy has no MIG class)";
    return ", or choose a MIG class (" + join(names) + ")";
  }
};

}  // namespace

std::unique_ptr<const Rule> make_mig_profile_rule() { return std::make_unique<MigProfileRule>(); }

}  // namespace gpuadmit
