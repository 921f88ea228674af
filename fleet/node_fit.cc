#include "fleet/node_fit.h"

#include <algorithm>

#include "engine/scheduling.h"

namespace gpuadmit::fleet {
namespace {

// k8s.io/apimachinery labels Requirement.Matches: a node with the label is judged by the
// engine's requirement_allows; one without it matches only NotIn and DoesNotExist (each valid:
// NotIn with values, DoesNotExist without).
bool expression_matches(const Json& requirement, const LiveNode& node) {
  const std::string_view key = string_member(requirement, "key");
  if (const std::string* value = find_label(node.labels, key)) {
    return requirement_allows(requirement, key, *value);
  }
  const std::string_view op = string_member(requirement, "operator");
  const size_t values = requirement_values(requirement).size();
  return (op == "NotIn" && values > 0) || (op == "DoesNotExist" && values == 0);
}

// nodeSelectorRequirementsAsFieldSelector: In and NotIn with exactly one value, against the
// node's fields, of which the scheduler sets only metadata.name.
bool field_matches(const Json& requirement, const LiveNode& node) {
  const std::string_view key = string_member(requirement, "key");
  const std::string_view op = string_member(requirement, "operator");
  const std::vector<std::string_view> values = requirement_values(requirement);
  if (values.size() != 1 || (op != "In" && op != "NotIn")) return false;  // invalid: no match
  const std::string_view field = key == "metadata.name" ? std::string_view(node.name) : "";
  return op == "In" ? field == values[0] : field != values[0];
}

bool all_match(const Json* list, const LiveNode& node,
               bool (*matches)(const Json&, const LiveNode&)) {
  if (list == nullptr || !list->is_array()) return true;
  return std::all_of(list->begin(), list->end(), [&](const Json& r) { return matches(r, node); });
}

// A term with no requirement matches nothing (nodeaffinity.newNodeSelectorTerms skips it).
bool term_matches(const Json& term, const LiveNode& node) {
  if (!term.is_object() || is_empty_node_selector_term(term)) return false;
  return all_match(find_member(term, "matchExpressions"), node, expression_matches) &&
         all_match(find_member(term, "matchFields"), node, field_matches);
}

}  // namespace

const Taint* untolerated_taint(const Json* tolerations, const LiveNode& node) {
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!any_tolerates(tolerations, taint)) return &taint;
  }
  return nullptr;
}

bool refused_as_unschedulable(const Json* tolerations, const LiveNode& node) {
  static const Taint kUnschedulable{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
  return node.unschedulable && !any_tolerates(tolerations, kUnschedulable);
}

bool node_affinity_matches(const Json& placement, const LiveNode& node) {
  if (const Json* selector = find_member(placement, "nodeSelector");
      selector != nullptr && selector->is_object()) {
    for (auto it = selector->begin(); it != selector->end(); ++it) {
      const std::string* value = find_label(node.labels, it.key());
      if (value == nullptr || !it.value().is_string() ||
          *value != it.value().get_ref<const std::string&>()) {
        return false;
      }
    }
  }
  const Json* terms = required_node_selector_terms(placement);
  if (terms == nullptr) return true;
  return std::any_of(terms->begin(), terms->end(),
                     [&](const Json& term) { return term_matches(term, node); });
}

bool gpu_requests_fit(const std::vector<PodGpuRequest>& requests, const ResourceAmounts& free) {
  return std::all_of(requests.begin(), requests.end(), [&](const PodGpuRequest& r) {
    return r.units <= amount_of(free, r.resource);
  });
}

namespace {

bool labels_match(const LiveNode& node, const LabelSelectorValues& selector) {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& entry) {
    const std::string* value = find_label(node.labels, entry.first);
    return value != nullptr &&
           std::find(entry.second.begin(), entry.second.end(), *value) != entry.second.end();
  });
}

// The node carries the labels the webhook sends the class's pods to: its nodeSelector, or with
// MIG strategy single the product suffixed with one of the class's profiles (class_node_labels).
bool node_in_class(const LiveNode& node, const GpuClass& c) {
  if (labels_match(node, c.node_selector)) return true;
  if (!c.mig || c.mig->strategy != MigConfig::Strategy::kSingle) return false;
  return std::any_of(c.mig->profiles.begin(), c.mig->profiles.end(), [&](const std::string& p) {
    return labels_match(node, class_node_labels(c, p));
  });
}

}  // namespace

const GpuClass* class_of_node(const LiveNode& node, const CompiledPolicy& policy) {
  const GpuClass* best = nullptr;
  size_t best_keys = 0;
  for (const GpuClass& c : policy.policy().classes) {
    if (c.node_selector.empty()) continue;
    if (node_in_class(node, c) && c.node_selector.size() > best_keys) {
      best = &c;
      best_keys = c.node_selector.size();
    }
  }
  return best;
}

}  // namespace gpuadmit::fleet
