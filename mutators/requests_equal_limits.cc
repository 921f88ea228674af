#include "mutators/requests_equal_limits.h"

#include <string>
#include <vector>

#include "engine/resources.h"
#include "mutators/mutator_support.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// Extended resources such as GPUs cannot be overcommitted: the API server requires request ==
// limit (pkg/apis/core/validation: "must be equal to ... limit"), and for a Pod it defaults a
// missing request to the limit (pkg/apis/core/v1/defaults.go SetDefaults_Pod) — but not for pod
// templates, and a request without a limit is simply rejected. `fix` writes the missing half for
// Pods and templates alike, copying the user's JSON value exactly (a YAML 1 stays a number, "2"
// stays a string). Values that differ, or that do not parse, are left for GPU001/GPU002: fixing
// them would mean guessing which side the user meant.
class RequestsEqualLimitsMutator final : public Mutator {
 public:
  std::string_view name() const override { return "requests-equal-limits"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.policy->policy().enforcement.requests_equal_limits == Action::kFix;
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      because(ctx, "spec.enforcement.requestsEqualLimits");
      const CompiledPolicy& policy = *ctx.policy;
      bool changed = false;
      for (const ContainerRef& ref : pod.containers()) {
        // Ephemeral containers may not declare resources at all (API validation).
        if (ref.kind == ContainerKind::kEphemeral) continue;
        changed |= fix_container(pod.container(ref, ContainerMember::kResources), policy);
      }
      return changed;
    });
  }

 private:
  static bool fix_container(WritableMember resources_member, const CompiledPolicy& policy) {
    Json* resources = resources_member.find();
    if (resources == nullptr || !resources->is_object()) return false;
    const Json* requests = present(*resources, "requests");
    const Json* limits = present(*resources, "limits");
    // Collect first, edit after: the loops below must not run over maps they extend.
    std::vector<std::pair<std::string, std::string_view>> missing;  // resource, section to fill
    for (const auto& [have, want] :
         {std::pair<const Json*, std::string_view>{limits, "requests"},
          std::pair<const Json*, std::string_view>{requests, "limits"}}) {
      if (have == nullptr || !have->is_object()) continue;
      const Json* other = want == "requests" ? requests : limits;
      for (auto it = have->begin(); it != have->end(); ++it) {
        if (!policy.is_gpu_resource(it.key())) continue;
        if (!parse_json_quantity(it.value())) continue;  // GPU002 reports it
        if (other != nullptr && present(*other, it.key()) != nullptr) continue;
        missing.emplace_back(it.key(), want);
      }
    }
    bool changed = false;
    for (const auto& [resource, section] : missing) {
      const std::string_view source = section == "requests" ? "limits" : "requests";
      const Json value = resources->at(std::string(source)).at(resource);
      Json* target = member_object(*resources, section);
      if (target == nullptr) continue;
      (*target)[resource] = value;
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_requests_equal_limits_mutator() {
  return std::make_unique<RequestsEqualLimitsMutator>();
}

}  // namespace gpuadmit
