#include "mutators/strip_gpu_pool.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/controllers.h"
#include "engine/scheduling.h"
#include "mutators/mutator_support.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// True when some class's nodeSelector has `key` with one of `values` (any value when null:
// operator Exists). The same test as GPU009 (rules/non_gpu_on_gpu_pool.cc).
bool selects_pool(const CompiledPolicy& policy, std::string_view key,
                  const std::vector<std::string>* values) {
  for (const GpuClass& c : policy.policy().classes) {
    for (const auto& [label, allowed] : c.node_selector) {
      if (label != key) continue;
      if (values == nullptr) return true;
      for (const std::string& v : allowed) {
        if (contains(*values, v)) return true;
      }
    }
  }
  return false;
}

// A toleration the strip removes: it names a key (see below) and tolerates a class taint.
bool tolerates_pool(const CompiledPolicy& policy, const Json& toleration) {
  if (string_member(toleration, "key").empty()) return false;
  for (const GpuClass& c : policy.policy().classes) {
    for (const Taint& taint : c.taints) {
      if (tolerates(toleration, taint)) return true;
    }
  }
  return false;
}

// Erases the elements of a list for which `drop` is true.
template <typename Pred>
bool erase_if(Json& container, Pred drop) {
  bool changed = false;
  if (container.is_array()) {
    for (size_t i = container.size(); i-- > 0;) {
      if (drop(container[i])) {
        container.erase(i);
        changed = true;
      }
    }
  }
  return changed;
}

// GPU pools are tainted so that only GPU pods run there; a pod that asks for no GPU but tolerates
// those taints or selects the pools' labels takes a GPU node's CPU and memory and keeps it from
// scaling down. GPU009 reports such pods; with nonGpuOnGpuPool: strip this mutation removes,
// from non-GPU pods only (node agents excepted like GPU009: they must run everywhere):
//  - tolerations that name a key and tolerate a class taint (Toleration.ToleratesTaint). The
//    key-less {operator: Exists} wildcard is kept: it also tolerates node.kubernetes.io/
//    not-ready, unreachable and every other taint, and removing it would change how the pod is
//    scheduled and evicted everywhere, not only on GPU pools. GPU009 still reports it.
//  - nodeSelector entries whose key is a class label and whose value one of the class's values;
//  - from required node-affinity terms, what selects a GPU pool and nothing else: an expression
//    `key Exists` on a class label, and in an expression `key In [...]` on a class label the
//    values that are a class's (an `In` left with no value goes). The user's own expressions
//    and values stay: a term `zone In [a], product In [A100]` becomes `zone In [a]`, so the pod
//    keeps its zone. The pod asks for no GPU and no longer tolerates the pools' taints, so the
//    wider term cannot put it on a GPU node. A term left with no expression and no matchFields
//    goes (an empty term matches no node: k8s.io/component-helpers nodeaffinity); when no term
//    is left, the required affinity goes with it, as an empty nodeSelectorTerms list is invalid
//    (and so do a nodeAffinity and an affinity left empty by that). Preferred affinity does not
//    put a pod on a tainted node by itself and is kept.
class StripGpuPoolMutator final : public Mutator {
 public:
  std::string_view name() const override { return "strip-gpu-pool"; }

  bool may_change(const PodContext& ctx) const override {
    return !ctx.gpu_pod && ctx.policy->policy().enforcement.non_gpu_on_gpu_pool == Action::kStrip;
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      because(ctx, "spec.enforcement.nonGpuOnGpuPool");
      const CompiledPolicy& policy = *ctx.policy;
      if (runs_on_every_node(ctx)) return false;
      bool changed = false;
      if (Json* tolerations = pod.spec(SpecMember::kTolerations).find()) {
        changed |= erase_if(*tolerations, [&](const Json& t) { return tolerates_pool(policy, t); });
      }
      if (Json* selector = pod.spec(SpecMember::kNodeSelector).find();
          selector != nullptr && selector->is_object()) {
        std::vector<std::string> drop;
        for (auto it = selector->begin(); it != selector->end(); ++it) {
          if (!it.value().is_string()) continue;
          const std::vector<std::string> value{it.value().get<std::string>()};
          if (selects_pool(policy, it.key(), &value)) drop.push_back(it.key());
        }
        for (const std::string& key : drop) selector->erase(key);
        changed |= !drop.empty();
      }
      changed |= strip_required_affinity(pod.spec(SpecMember::kAffinity), policy);
      return changed;
    });
  }

 private:
  // Removes from a required term what selects a GPU pool (see above); true when it changed.
  static bool strip_term(Json& term, const CompiledPolicy& policy) {
    Json* expressions = term.is_object() ? find_member(term, "matchExpressions") : nullptr;
    if (expressions == nullptr || !expressions->is_array()) return false;
    bool changed = false;
    for (size_t i = expressions->size(); i-- > 0;) {
      Json& e = (*expressions)[i];
      const std::string key(string_member(e, "key"));
      const std::string_view op = string_member(e, "operator");
      if (op == "Exists" && selects_pool(policy, key, nullptr)) {
        expressions->erase(i);
        changed = true;
        continue;
      }
      Json* values = op == "In" ? find_member(e, "values") : nullptr;
      if (values == nullptr || !values->is_array()) continue;
      const bool dropped = erase_if(*values, [&](const Json& v) {
        const std::vector<std::string> one{v.is_string() ? v.get<std::string>() : ""};
        return v.is_string() && selects_pool(policy, key, &one);
      });
      if (!dropped) continue;
      changed = true;
      if (values->empty()) expressions->erase(i);
    }
    return changed;
  }

  static bool strip_required_affinity(WritableMember affinity_member,
                                      const CompiledPolicy& policy) {
    Json* affinity = affinity_member.find();
    if (affinity == nullptr || !affinity->is_object()) return false;
    Json* node_affinity = find_member(*affinity, "nodeAffinity");
    if (node_affinity == nullptr || !node_affinity->is_object()) return false;
    Json* required = find_member(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
    if (required == nullptr || !required->is_object()) return false;
    Json* terms = find_member(*required, "nodeSelectorTerms");
    if (terms == nullptr || !terms->is_array()) return false;
    bool changed = false;
    for (size_t i = terms->size(); i-- > 0;) {
      Json& term = (*terms)[i];
      if (!strip_term(term, policy)) continue;
      changed = true;
      const Json* expressions = find_member(term, "matchExpressions");
      const Json* fields = find_member(term, "matchFields");
      const bool no_expressions =
          expressions == nullptr || !expressions->is_array() || expressions->empty();
      const bool no_fields = fields == nullptr || !fields->is_array() || fields->empty();
      if (no_expressions && no_fields) terms->erase(i);
    }
    if (!changed) return false;
    if (terms->empty()) {
      node_affinity->erase("requiredDuringSchedulingIgnoredDuringExecution");
      if (node_affinity->empty()) affinity->erase("nodeAffinity");
      if (affinity->empty()) affinity_member.erase();
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_strip_gpu_pool_mutator() {
  return std::make_unique<StripGpuPoolMutator>();
}

}  // namespace gpuadmit
