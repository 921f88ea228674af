#include "mutators/tolerations.h"

#include "engine/scheduling.h"
#include "mutators/mutator_support.h"
#include "policies/policy_path.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// Like plugin/pkg/admission/extendedresourcetoleration, which adds {key: <resource>, operator:
// Exists, effect: NoSchedule} for each extended resource a pod requests — but for the class's
// actual taints, and only when no existing toleration already tolerates the taint, decided by
// Kubernetes' own Toleration.ToleratesTaint (engine/scheduling.h): {operator: Exists} with no
// key tolerates everything, an omitted effect tolerates every effect, Equal needs the same
// value. Tolerations are only ever appended, never edited or reordered. The list we append to
// counts too, so a class listing the same taint twice gets one toleration.
class TolerationsMutator final : public Mutator {
 public:
  std::string_view name() const override { return "tolerations"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.gpu_class != nullptr && !ctx.gpu_class->taints.empty();
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      WritableMember tolerations_member = pod.spec(SpecMember::kTolerations);
      bool changed = false;
      const std::vector<Taint>& taints = ctx.gpu_class->taints;
      for (size_t i = 0; i < taints.size(); ++i) {
        if (any_tolerates(tolerations_member.find(), taints[i])) continue;
        Json* tolerations = tolerations_member.array();
        if (tolerations == nullptr) return changed;
        tolerations->push_back(toleration_for(taints[i]));
        because(ctx, policy_path::index(policy_path::cls(ctx.gpu_class->name) + ".taints", i));
        changed = true;
      }
      return changed;
    });
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_tolerations_mutator() {
  return std::make_unique<TolerationsMutator>();
}

}  // namespace gpuadmit
