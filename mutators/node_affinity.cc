#include "mutators/node_affinity.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/scheduling.h"
#include "mutators/mutator_support.h"
#include "policies/policy_path.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

Json expression_for(const std::string& key, const std::vector<std::string>& values) {
  Json e = empty_object();
  e["key"] = key;
  e["operator"] = "In";
  e["values"] = values;
  return e;
}

// True when the term already has the class's expression: `key In values`, with the same values
// in any order (In does not care about order). It may have been written by gpuadmit before, or
// by the user. A narrower user expression (`key In [one of the values]`) does not count: SPEC
// §4.5 adds the class expression next to it, and the result selects the same nodes.
bool already_present(const Json& term, const std::string& key,
                     const std::vector<std::string>& values) {
  const Json* expressions = find_member(term, "matchExpressions");
  if (expressions == nullptr || !expressions->is_array()) return false;
  return std::any_of(expressions->begin(), expressions->end(), [&](const Json& e) {
    if (string_member(e, "key") != key || string_member(e, "operator") != "In") return false;
    const Json* list = find_member(e, "values");
    if (list == nullptr || !list->is_array()) return false;
    std::vector<std::string> have;
    for (const Json& v : *list) {
      if (!v.is_string()) return false;
      have.push_back(v.get<std::string>());
    }
    std::vector<std::string> want = values;
    std::sort(have.begin(), have.end());
    std::sort(want.begin(), want.end());
    have.erase(std::unique(have.begin(), have.end()), have.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    return have == want;
  });
}

// Kubernetes ORs nodeSelectorTerms and ANDs the requirements inside a term
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity, and the API reference of
// NodeSelector: "The terms are ORed"). Pinning the pod to its class therefore means ANDing the
// class's `key In values` into every existing term — adding a new term would OR it and let the
// pod run anywhere the user's own terms allow — and creating a term only when there is none.
// Empty terms match no node (nodeaffinity skips them); ANDing into one would make it match class
// nodes, so they are left as they are. The pod's own constraints are never rewritten: when they
// contradict the class (engine/scheduling.h class_conflict), nothing is added and GPU011 says
// why. With MIG strategy single the product values are the MIG products GPU Feature Discovery
// labels such nodes with (class_node_labels). Preferred affinity is not touched.
// The class field a label comes from: its nodeSelector, else (MIG strategy single's product
// label) its mig settings.
std::string label_source(const GpuClass& c, std::string_view key) {
  for (const auto& [label, values] : c.node_selector) {
    if (label == key) return policy_path::key(policy_path::cls(c.name) + ".nodeSelector", key);
  }
  return policy_path::cls(c.name) + ".mig";
}

class NodeAffinityMutator final : public Mutator {
 public:
  std::string_view name() const override { return "node-affinity"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.gpu_class != nullptr && mig_profile_valid(ctx);
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const LabelSelectorValues labels = class_node_labels(*ctx.gpu_class, ctx.mig_profile);
      if (labels.empty()) return false;
      if (class_conflict(pod.view(), labels)) return false;  // GPU011

      Json* affinity = pod.spec(SpecMember::kAffinity).object();
      if (affinity == nullptr) return false;
      Json* node_affinity = member_object(*affinity, "nodeAffinity");
      if (node_affinity == nullptr) return false;
      Json* required =
          member_object(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
      if (required == nullptr) return false;
      Json* terms = member_array(*required, "nodeSelectorTerms");
      if (terms == nullptr) return false;

      if (terms->empty()) {
        Json expressions = empty_array();
        for (const auto& [key, values] : labels) {
          expressions.push_back(expression_for(key, values));
          because(ctx, label_source(*ctx.gpu_class, key));
        }
        terms->push_back(Json{{"matchExpressions", std::move(expressions)}});
        return true;
      }
      bool changed = false;
      for (Json& term : *terms) {
        if (!term.is_object() || is_empty_node_selector_term(term)) continue;
        for (const auto& [key, values] : labels) {
          if (already_present(term, key, values)) continue;
          Json* expressions = member_array(term, "matchExpressions");
          if (expressions == nullptr) break;
          expressions->push_back(expression_for(key, values));
          because(ctx, label_source(*ctx.gpu_class, key));
          changed = true;
        }
      }
      return changed;
    });
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_node_affinity_mutator() {
  return std::make_unique<NodeAffinityMutator>();
}

}  // namespace gpuadmit
