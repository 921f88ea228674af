#include "mutators/priority.h"

#include <string>

#include "mutators/mutator_support.h"
#include "policies/policy_path.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// The class the tenant wants for this pod: byWorkload[workload type], else the default.
const std::string* wanted_class(const TenantPriority& priority, const std::string& workload) {
  if (!workload.empty()) {
    for (const auto& [type, name] : priority.by_workload) {
      if (type == workload) return &name;
    }
  }
  return priority.default_class ? &*priority.default_class : nullptr;
}

// The in-tree Priority admission plugin (plugin/pkg/admission/priority/admission.go admitPod)
// runs before mutating webhooks. On CREATE it resolves the pod's priorityClassName — or, when
// there is none, the globalDefault class — and writes spec.priority and spec.preemptionPolicy
// from it. A webhook that only changes priorityClassName afterwards leaves the pod with the old
// class's priority (0 with no globalDefault class): the pod silently runs at the wrong priority,
// and when the plugin is invoked again (reinvocation) it rejects the pod because "the integer
// value of priority (...) must not be provided in pod spec". So on a Pod we set all three
// consistently with the declared PriorityClass (preemptionPolicy defaults to
// PreemptLowerPriority, as the API does for PriorityClass). A pod template only gets the name:
// the plugin fills in the rest when the controller creates the pods, and a template that
// carries spec.priority would make them fail admission if the class's value ever changed.
// A globalDefault class counts as "unset": the plugin may have put it there, not the user.
// An explicit, non-default class is the user's choice and left alone (GPU010 judges it).
class PriorityMutator final : public Mutator {
 public:
  std::string_view name() const override { return "priority"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.tenant != nullptr;
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const CompiledPolicy& policy = *ctx.policy;
      const std::string_view current = string_member(pod.view().spec(), "priorityClassName");
      if (!current.empty()) {
        const PriorityClassDecl* global_default = policy.global_default_priority_class();
        if (global_default == nullptr || global_default->name != current) return false;
      }
      const std::string* wanted = wanted_class(ctx.tenant->priority, ctx.workload_type);
      if (wanted == nullptr) return false;
      const bool by_workload = wanted != &*ctx.tenant->priority.default_class;
      because(ctx, by_workload
                       ? policy_path::key(policy_path::tenant(*ctx.tenant) + ".priority.byWorkload",
                                          ctx.workload_type)
                       : policy_path::tenant(*ctx.tenant) + ".priority.default");
      const PriorityClassDecl* decl = policy.find_priority_class(*wanted);
      if (decl == nullptr) return false;  // the loader rejects this; never write half a setting
      bool changed = pod.spec(SpecMember::kPriorityClassName).set(decl->name);
      if (!pod.view().is_template()) {
        changed |= pod.spec(SpecMember::kPriority).set(decl->value);
        changed |= pod.spec(SpecMember::kPreemptionPolicy).set(decl->preemption_policy);
      }
      return changed;
    });
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_priority_mutator() {
  return std::make_unique<PriorityMutator>();
}

}  // namespace gpuadmit
