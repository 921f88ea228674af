#include "rules/known_class.h"

#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// A gpuadmit.io/class that names no class would leave the pod without the class's tolerations
// and node affinity (SPEC §4.4-4.5); most often a typo. Checked on every pod that sets it, GPU
// pod or not: the setting is wrong either way.
class KnownClassRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU004"; }
  std::string_view name() const override { return "KnownGpuClass"; }
  std::string_view summary() const override {
    return "gpuadmit.io/class must name a class of the policy";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.class_from_annotation || ctx.gpu_class != nullptr) return;
    std::vector<std::string> names;
    for (const GpuClass& c : ctx.policy->policy().classes) names.push_back(c.name);
    std::string message =
        "gpuadmit.io/class " + json_text(Json(ctx.class_name)) + " names no class of the policy; ";
    message += names.empty() ? "the policy defines no GPU classes: remove the setting"
                             : "use one of: " + join(names);
    out.push_back(Violation{std::move(message), setting_path(pod, kClassKey), "spec.classes"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_known_class_rule() { return std::make_unique<KnownClassRule>(); }

}  // namespace gpuadmit
