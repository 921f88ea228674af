#include "rules/class_placement.h"

#include "engine/scheduling.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// The class's node affinity is ANDed into the pod's own placement (SPEC §4.5), never
// overwritten: when the pod's nodeSelector, or every one of its required node-affinity terms,
// allows none of the class's values for a class label, the pod could never be scheduled
// (nodeSelectorTerms are ORed, the expressions of a term ANDed). Matching semantics are
// engine/scheduling.h's (k8s.io/component-helpers nodeaffinity). With MIG strategy single the
// class's product label targets the MIG product, as the node-affinity mutation writes it.
class ClassPlacementRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU011"; }
  std::string_view name() const override { return "PlacementMatchesClass"; }
  std::string_view summary() const override {
    return "the pod's own nodeSelector and node affinity must not contradict its GPU class";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr) return;
    const LabelSelectorValues values = class_node_labels(*ctx.gpu_class, ctx.mig_profile);
    if (values.empty()) return;
    std::optional<std::string> conflict = class_conflict(pod, values);
    if (!conflict) return;
    out.push_back(Violation{"class " + ctx.gpu_class->name + ": " + *conflict +
                                "; remove the contradicting constraint or choose another class",
                            pod.location().path});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_class_placement_rule() {
  return std::make_unique<ClassPlacementRule>();
}

}  // namespace gpuadmit
