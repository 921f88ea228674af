#include "mutators/class_annotation.h"

#include "mutators/mutator_support.h"
#include "policies/policy_path.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

constexpr std::string_view kClassAnnotation = "gpuadmit.io/class";

// Class resolution itself happens before any mutator runs (engine/context.cc
// resolve_pod_context). Writing the result onto the pod (template) makes the decision visible
// to the user, to the scheduler-side tooling and to the next admission: a class picked from the
// pod's nodeSelector, the tenant's defaultClass, a label or the workload's top-level metadata
// is the annotation next time, so re-running gpuadmit resolves the same class (idempotence).
// Only a class the policy knows is recorded: an unknown name is GPU004, and a non-GPU pod has
// no class.
class ClassAnnotationMutator final : public Mutator {
 public:
  std::string_view name() const override { return "class"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.gpu_class != nullptr;
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      // Where the class came from: the tenant's defaultClass, else the class itself (the pod
      // named it, or its nodeSelector matched the class's).
      const bool from_tenant = !ctx.class_from_annotation && ctx.tenant != nullptr &&
                               ctx.tenant->default_class == ctx.gpu_class->name;
      because(ctx, from_tenant ? policy_path::tenant(*ctx.tenant) + ".defaultClass"
                               : policy_path::cls(ctx.gpu_class->name));
      return pod.set_annotation(kClassAnnotation, ctx.gpu_class->name);
    });
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_class_annotation_mutator() {
  return std::make_unique<ClassAnnotationMutator>();
}

}  // namespace gpuadmit
