#include "mutators/priority.h"

#include <string>

#include "engine/priority_classes.h"
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

// The in-tree Priority admission plugin (plugin/pkg/admission/priority/admission.go admitPod,
// Kubernetes 1.28) runs on a Pod's CREATE before mutating webhooks, and again after them when a
// webhook changed the object (apiserver admission/reinvocation.go: every in-tree plugin is
// reinvoked). Each time it resolves priorityClassName — none: the globalDefault class with the
// lowest value, whose name it writes — through its PriorityClass lister, and refuses the pod
// (Forbidden) when the class does not exist ("no PriorityClass with name X was found"), when
// spec.priority is set to another value than the class's ("the integer value of priority (100)
// must not be provided in pod spec; priority admission controller computed 150 ..."), or when
// spec.preemptionPolicy differs from the class's. It sets both only on CREATE; on UPDATE they
// are immutable (validation) and it copies them from the old pod.
//
// So on a Pod all three are written together, from the class as the cluster has it when the
// webhook watches the cluster's PriorityClasses (`serve --cluster-priority-classes`): a class
// the cluster does not have is not written at all — the pod keeps what it asked for, and the
// disagreement is reported (webhook/server.cc). Without the cluster's classes (lint, review,
// serve without the flag) the policy's declaration stands in, which holds when the cluster's
// classes are the policy's (`gpuadmit render` makes them). A pod template only gets the name:
// the plugin fills in the rest when the controller creates the pods, and a template that
// carries spec.priority would make them fail admission if the class's value ever changed.
// A globalDefault class counts as "unset" (engine/priority_classes.h is_global_default_class):
// the plugin may have put it there, not the user. An explicit, non-default class is the user's
// choice and left alone (GPU010 judges it).
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
      const PriorityClassSource* cluster =
          ctx.request != nullptr ? ctx.request->priority_classes : nullptr;
      // Watched but not read yet: nothing is known of the cluster's classes, nothing written.
      if (cluster != nullptr && !cluster->synced()) return false;
      const std::string_view current = string_member(pod.view().spec(), "priorityClassName");
      if (!current.empty() && !is_global_default_class(current, policy, cluster)) return false;
      const std::string* wanted = wanted_class(ctx.tenant->priority, ctx.workload_type);
      if (wanted == nullptr) return false;
      const bool by_workload = wanted != &*ctx.tenant->priority.default_class;
      because(ctx, by_workload
                       ? policy_path::key(policy_path::tenant(*ctx.tenant) + ".priority.byWorkload",
                                          ctx.workload_type)
                       : policy_path::tenant(*ctx.tenant) + ".priority.default");
      const PriorityClassDecl* decl = policy.find_priority_class(*wanted);
      if (decl == nullptr) return false;  // the loader rejects this; never write half a setting
      ClusterPriorityClass target{decl->name, decl->value, decl->preemption_policy, false};
      if (cluster != nullptr) {
        std::optional<ClusterPriorityClass> actual = cluster->find(decl->name);
        if (!actual) return false;  // the plugin would refuse the pod (see above)
        target = std::move(*actual);
      }
      bool changed = pod.spec(SpecMember::kPriorityClassName).set(target.name);
      if (!pod.view().is_template()) {
        changed |= pod.spec(SpecMember::kPriority).set(target.value);
        changed |= pod.spec(SpecMember::kPreemptionPolicy).set(target.preemption_policy);
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
