#include "rules/dra_mig_profile.h"

#include <algorithm>

#include "rules/claim_rule_support.h"

namespace gpuadmit {
namespace {

using namespace claim_rules;

// GPU007 for DRA: a request whose CEL selector pins a MIG profile literally
// (`device.attributes['gpu.nvidia.com'].profile == '1g.5gb'`, NVIDIA k8s-dra-driver-gpu's
// attribute) can only be allocated where that profile exists. A class with `mig.profiles`
// lists what its nodes offer; a DeviceClass mapped with `migProfile` hands out only that one.
// A class without `mig` says nothing about profiles and is not checked; a profile computed at
// run time (not a literal) cannot be checked.
class DraMigProfileRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU022"; }
  std::string_view name() const override { return "DraAllowedMigProfile"; }
  std::string_view summary() const override {
    return "a DRA request's literal MIG profile must be one its class offers";
  }
  Action default_action() const override { return Action::kDeny; }
  void check(const PodView&, const PodContext&, std::vector<Violation>&) const override {}

  void check_claim(const Json&, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    for_each_gpu_request(
        ctx, [&](const DraRequest& r, const GpuClass& c, const DeviceClassMapping& m) {
          for (const auto& [profile, path] : r.mig_profiles) {
            if (!m.mig_profile.empty() && profile != m.mig_profile) {
              out.push_back(Violation{request_label(ctx, r) + " selects MIG profile " + profile +
                                          " but the DeviceClass hands out only " + m.mig_profile +
                                          "; no device can match: select " + m.mig_profile +
                                          " or use the DeviceClass of " + profile,
                                      path});
              continue;
            }
            if (!c.mig) continue;
            const std::vector<std::string>& offered = c.mig->profiles;
            if (std::find(offered.begin(), offered.end(), profile) != offered.end()) continue;
            std::string list;
            for (const std::string& p : offered) list += (list.empty() ? "" : ", ") + p;
            out.push_back(Violation{request_label(ctx, r) + " selects MIG profile " + profile +
                                        ", which class " + c.name + " does not offer (" + list +
                                        "); the claim could never be allocated: select one of them",
                                    path});
          }
        });
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_mig_profile_rule() {
  return std::make_unique<DraMigProfileRule>();
}

}  // namespace gpuadmit
