#include "engine/scheduling.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace gpuadmit {
namespace {

// A string field of a toleration or requirement; absent, null or non-string count as "" (the
// Go zero value the API server decodes them to).
std::string_view field(const Json& object, std::string_view key) {
  return string_member(object, key);
}

// Go's strconv.ParseInt(s, 10, 64): an optional sign, then one or more decimal digits, within
// int64. No spaces, no underscores (those need base 0), no "0x".
std::optional<int64_t> parse_go_int64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  // Accumulate as a negative number so that INT64_MIN fits.
  int64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const int digit = c - '0';
    if (value < (std::numeric_limits<int64_t>::min() + digit) / 10) return std::nullopt;
    value = value * 10 - digit;
  }
  if (!negative) {
    if (value == std::numeric_limits<int64_t>::min()) return std::nullopt;
    return -value;
  }
  return value;
}

std::vector<std::string_view> string_values(const Json& requirement) {
  std::vector<std::string_view> values;
  const Json* list = find_member(requirement, "values");
  if (list == nullptr || !list->is_array()) return values;
  for (const Json& v : *list) {
    if (v.is_string()) values.emplace_back(v.get_ref<const std::string&>());
  }
  return values;
}

bool contains(const std::vector<std::string_view>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

const Json* list_member(const Json& object, std::string_view key) {
  const Json* list = find_member(object, key);
  return (list != nullptr && list->is_array()) ? list : nullptr;
}

// True when the term admits a node whose `key` label is `value`: every matchExpression allows it
// (the expressions of a term are ANDed).
bool term_allows(const Json& term, std::string_view key, std::string_view value) {
  const Json* expressions = list_member(term, "matchExpressions");
  if (expressions == nullptr) return true;
  return std::all_of(expressions->begin(), expressions->end(), [&](const Json& requirement) {
    return !requirement.is_object() || requirement_allows(requirement, key, value);
  });
}

// "nvidia.com/gpu.product In [A, B]", "pool Exists" — the term's requirements on `key`.
std::string requirements_text(const Json& term, std::string_view key) {
  std::string out;
  const Json* expressions = list_member(term, "matchExpressions");
  if (expressions == nullptr) return out;
  for (const Json& requirement : *expressions) {
    if (!requirement.is_object() || field(requirement, "key") != key) continue;
    if (!out.empty()) out += ", ";
    out += std::string(key) + " " + std::string(field(requirement, "operator"));
    const std::vector<std::string_view> values = string_values(requirement);
    if (!values.empty() || find_member(requirement, "values") != nullptr) {
      out += " [";
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out += ", ";
        out += values[i];
      }
      out += "]";
    }
  }
  return out;
}

}  // namespace

const Json* required_node_selector_terms(const Json& spec) {
  const Json* affinity = find_member(spec, "affinity");
  if (affinity == nullptr) return nullptr;
  const Json* node_affinity = find_member(*affinity, "nodeAffinity");
  if (node_affinity == nullptr) return nullptr;
  const Json* required =
      find_member(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
  if (required == nullptr) return nullptr;
  return list_member(*required, "nodeSelectorTerms");
}

// k8s.io/api/core/v1/toleration.go (*Toleration).ToleratesTaint, field by field.
bool tolerates(const Json& toleration, const Taint& taint) {
  if (!toleration.is_object()) return false;
  const std::string_view effect = field(toleration, "effect");
  if (!effect.empty() && effect != taint.effect) return false;
  const std::string_view key = field(toleration, "key");
  if (!key.empty() && key != taint.key) return false;
  const std::string_view op = field(toleration, "operator");
  const std::string_view value = field(toleration, "value");
  // "empty operator means Equal". Note that Kubernetes applies Equal even to an empty key
  // (validation forbids that combination, ToleratesTaint does not), so we do too.
  if (op.empty() || op == "Equal") return value == taint.value;
  if (op == "Exists") return true;
  if (op == "Lt" || op == "Gt") {
    // compareNumericValues: both sides strconv.ParseInt(v, 10, 64); a parse error tolerates
    // nothing. Lt: taint < toleration; Gt: taint > toleration.
    const std::optional<int64_t> threshold = parse_go_int64(value);
    const std::optional<int64_t> actual = parse_go_int64(taint.value);
    if (!threshold || !actual) return false;
    return op == "Lt" ? *actual < *threshold : *actual > *threshold;
  }
  return false;
}

bool any_tolerates(const Json* tolerations, const Taint& taint) {
  if (tolerations == nullptr || !tolerations->is_array()) return false;
  return std::any_of(tolerations->begin(), tolerations->end(),
                     [&](const Json& t) { return tolerates(t, taint); });
}

// k8s.io/component-helpers/scheduling/corev1/nodeaffinity nodeSelectorRequirementsAsSelector +
// k8s.io/apimachinery/pkg/labels Requirement.Matches, for a node that has the label. A
// requirement that Kubernetes rejects as invalid (In/NotIn without values, Exists/DoesNotExist
// with values, Gt/Lt without exactly one integer) makes its term match no node, so it allows
// nothing here either.
bool requirement_allows(const Json& requirement, std::string_view key, std::string_view value) {
  if (field(requirement, "key") != key) return true;
  const std::string_view op = field(requirement, "operator");
  const std::vector<std::string_view> values = string_values(requirement);
  if (op == "In") return !values.empty() && contains(values, value);
  if (op == "NotIn") return !values.empty() && !contains(values, value);
  if (op == "Exists") return values.empty();
  if (op == "DoesNotExist") return false;  // the node has the label
  if (op == "Gt" || op == "Lt") {
    if (values.size() != 1) return false;
    const std::optional<int64_t> bound = parse_go_int64(values[0]);
    const std::optional<int64_t> actual = parse_go_int64(value);
    if (!bound || !actual) return false;
    return op == "Gt" ? *actual > *bound : *actual < *bound;
  }
  return false;
}

bool is_empty_node_selector_term(const Json& term) {
  const Json* expressions = list_member(term, "matchExpressions");
  const Json* fields = list_member(term, "matchFields");
  return (expressions == nullptr || expressions->empty()) && (fields == nullptr || fields->empty());
}

LabelSelectorValues class_node_labels(const GpuClass& gpu_class, std::string_view mig_profile) {
  LabelSelectorValues labels = gpu_class.node_selector;
  if (!gpu_class.mig || gpu_class.mig->strategy != MigConfig::Strategy::kSingle ||
      mig_profile.empty()) {
    return labels;
  }
  std::string profile(mig_profile);
  std::replace(profile.begin(), profile.end(), '+', '.');
  for (auto& [key, values] : labels) {
    if (key != kGpuProductLabel) continue;
    for (std::string& v : values) v += "-MIG-" + profile;
  }
  return labels;
}

std::optional<std::string> class_conflict(const PodView& pod,
                                          const LabelSelectorValues& label_values) {
  const Json& spec = pod.spec();

  // nodeSelector is ANDed with the required affinity: one label with a value outside the
  // class's values makes every node of the class ineligible.
  if (const Json* selector = find_member(spec, "nodeSelector");
      selector != nullptr && selector->is_object()) {
    for (const auto& [key, values] : label_values) {
      const Json* v = find_member(*selector, key);
      if (v == nullptr || !v->is_string()) continue;
      const std::string& pod_value = v->get_ref<const std::string&>();
      if (contains(values, pod_value)) continue;
      return "nodeSelector " + key + "=" + pod_value + " allows none of the class's " + key +
             " values [" + join(values) + "]";
    }
  }

  // nodeSelectorTerms are ORed: the pod conflicts only when no term can admit a class node,
  // i.e. every (non-empty) term rules out all class values of some label. Empty terms match no
  // node at all and say nothing about the class; matchFields (metadata.name) cannot be judged.
  const Json* terms = required_node_selector_terms(spec);
  if (terms == nullptr) return std::nullopt;
  std::string reasons;
  size_t judged = 0;
  for (size_t i = 0; i < terms->size(); ++i) {
    const Json& term = (*terms)[i];
    if (!term.is_object() || is_empty_node_selector_term(term)) continue;
    ++judged;
    const std::pair<std::string, std::vector<std::string>>* blocked = nullptr;
    for (const auto& label : label_values) {
      const bool any =
          std::any_of(label.second.begin(), label.second.end(),
                      [&](const std::string& v) { return term_allows(term, label.first, v); });
      if (!any) {
        blocked = &label;
        break;
      }
    }
    if (blocked == nullptr) return std::nullopt;  // this term can admit a class node
    if (!reasons.empty()) reasons += "; ";
    reasons += "nodeSelectorTerms[" + std::to_string(i) + "] (" +
               requirements_text(term, blocked->first) + ") allows none of the class's " +
               blocked->first + " values [" + join(blocked->second) + "]";
  }
  if (judged == 0) return std::nullopt;
  return "required node affinity " + reasons;
}

}  // namespace gpuadmit
