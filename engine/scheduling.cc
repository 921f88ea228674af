#include "engine/scheduling.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <map>

#include "engine/join.h"

namespace gpuadmit {
namespace {

// A string field of a toleration or requirement; absent, null or non-string count as "" (the
// Go zero value the API server decodes them to).
std::string_view field(const Json& object, std::string_view key) {
  return string_member(object, key);
}

bool contains(const std::vector<std::string_view>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
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
    const std::vector<std::string_view> values = requirement_values(requirement);
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

// What a node's label `key` must be for a set of requirements to hold together, decided exactly
// (k8s.io/apimachinery/pkg/labels Requirement.Matches): a node either lacks the label — which
// NotIn and DoesNotExist accept and In, Exists, Gt and Lt refuse — or has one string value.
class KeyConstraint {
 public:
  // A NodeSelectorRequirement on this key; one Kubernetes rejects as invalid makes its term match
  // no node (component-helpers nodeaffinity: the term's selector fails to parse).
  void add_requirement(std::string_view op, const std::vector<std::string_view>& values) {
    if (op == "In" || op == "NotIn") {
      if (values.empty()) invalid_ = true;
      if (op == "In") {
        present_ = true;
        intersect(values);
      } else {
        excluded_.insert(excluded_.end(), values.begin(), values.end());
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (!values.empty()) invalid_ = true;
      (op == "Exists" ? present_ : absent_) = true;
    } else if (op == "Gt" || op == "Lt") {
      const std::optional<int64_t> bound =
          values.size() == 1 ? parse_go_int64(values[0]) : std::nullopt;
      if (!bound) {
        invalid_ = true;
        return;
      }
      present_ = true;
      if (op == "Gt") {
        gt_ = gt_ ? std::max(*gt_, *bound) : *bound;
      } else {
        lt_ = lt_ ? std::min(*lt_, *bound) : *bound;
      }
    } else {
      invalid_ = true;
    }
  }
  // The label must have one of `values` (a nodeSelector entry, a class's node selector).
  void require_one_of(const std::vector<std::string_view>& values) {
    present_ = true;
    intersect(values);
  }

  bool satisfiable() const {
    if (invalid_) return false;
    if (absent_ || !present_) return !present_;  // the node without the label
    if (candidates_) {
      return std::any_of(candidates_->begin(), candidates_->end(),
                         [&](std::string_view v) { return allowed_value(v); });
    }
    if (!gt_ && !lt_) return true;  // infinitely many strings, finitely many excluded
    // Integers strictly between the bounds, more of them than excluded ones in the range.
    const __int128 low = gt_ ? __int128{*gt_} : __int128{INT64_MIN} - 1;
    const __int128 high = lt_ ? __int128{*lt_} : __int128{INT64_MAX} + 1;
    __int128 room = high - low - 1;
    std::vector<int64_t> excluded_numbers;
    for (std::string_view e : excluded_) {
      const std::optional<int64_t> n = parse_go_int64(e);
      if (n && std::to_string(*n) == e && *n > low && *n < high) excluded_numbers.push_back(*n);
    }
    std::sort(excluded_numbers.begin(), excluded_numbers.end());
    room -=
        std::unique(excluded_numbers.begin(), excluded_numbers.end()) - excluded_numbers.begin();
    return room > 0;
  }

 private:
  void intersect(const std::vector<std::string_view>& values) {
    if (!candidates_) {
      candidates_ = values;
      return;
    }
    std::vector<std::string_view> kept;
    for (std::string_view v : *candidates_) {
      if (contains(values, v)) kept.push_back(v);
    }
    candidates_ = std::move(kept);
  }
  bool allowed_value(std::string_view v) const {
    if (contains(excluded_, v)) return false;
    if (!gt_ && !lt_) return true;
    const std::optional<int64_t> n = parse_go_int64(v);
    return n && (!gt_ || *n > *gt_) && (!lt_ || *n < *lt_);
  }

  bool present_ = false, absent_ = false, invalid_ = false;
  std::optional<std::vector<std::string_view>> candidates_;
  std::vector<std::string_view> excluded_;
  std::optional<int64_t> gt_, lt_;
};

// The first label key on which no node can satisfy the term's expressions AND the pod's
// nodeSelector AND (when given) the class's labels; nullopt when some node can. matchFields
// (metadata.name) cannot be judged and are taken as satisfiable.
std::optional<std::string> unsatisfiable_key(const Json* term, const Json* selector,
                                             const LabelSelectorValues* class_labels) {
  std::map<std::string, KeyConstraint, std::less<>> keys;
  if (term != nullptr) {
    if (const Json* expressions = list_member(*term, "matchExpressions")) {
      for (const Json& requirement : *expressions) {
        if (!requirement.is_object()) continue;
        keys[std::string(field(requirement, "key"))].add_requirement(
            field(requirement, "operator"), requirement_values(requirement));
      }
    }
  }
  if (selector != nullptr && selector->is_object()) {
    for (auto it = selector->begin(); it != selector->end(); ++it) {
      if (!it.value().is_string()) continue;
      keys[it.key()].require_one_of({it.value().get_ref<const std::string&>()});
    }
  }
  if (class_labels != nullptr) {
    for (const auto& [key, values] : *class_labels) {
      keys[key].require_one_of(std::vector<std::string_view>(values.begin(), values.end()));
    }
  }
  for (const auto& [key, constraint] : keys) {
    if (!constraint.satisfiable()) return key;
  }
  return std::nullopt;
}

// Whether any node satisfies the pod's nodeSelector and one of its required terms (all of them
// when there is no judged term), and the class's labels when given.
bool placement_satisfiable(const Json* selector, const Json* terms,
                           const LabelSelectorValues* class_labels) {
  bool judged = false;
  if (terms != nullptr) {
    for (const Json& term : *terms) {
      if (!term.is_object() || is_empty_node_selector_term(term)) continue;
      judged = true;
      if (!unsatisfiable_key(&term, selector, class_labels)) return true;
    }
  }
  return !judged && !unsatisfiable_key(nullptr, selector, class_labels);
}

}  // namespace

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
  const std::vector<std::string_view> values = requirement_values(requirement);
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

namespace {

// Why nodeSelectorTerms[i] (not empty) admits no node of the class: a class label none of whose
// values it allows, or else the label on which it contradicts itself or the pod's nodeSelector
// once the class is required.
std::string term_conflict(const Json& term, size_t i, const Json* selector,
                          const LabelSelectorValues& label_values) {
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
  if (blocked != nullptr) {
    return "nodeSelectorTerms[" + std::to_string(i) + "] (" +
           requirements_text(term, blocked->first) + ") allows none of the class's " +
           blocked->first + " values [" + join(blocked->second) + "]";
  }
  const std::string key = unsatisfiable_key(&term, selector, &label_values).value_or("");
  const std::string text = requirements_text(term, key);
  return "nodeSelectorTerms[" + std::to_string(i) + "] (" +
         (text.empty() ? "no requirement on " + key : text) +
         ") admits no node with the pod's nodeSelector and the class's labels on " + key;
}

}  // namespace

std::optional<std::string> class_conflict(const PodView& pod,
                                          const LabelSelectorValues& label_values) {
  const Json& spec = pod.spec();
  const Json* selector = find_member(spec, "nodeSelector");
  if (selector != nullptr && !selector->is_object()) selector = nullptr;
  const Json* terms = required_node_selector_terms(spec);

  // Decided exactly, per label key (the four operators intersect per key): a conflict is a pod
  // that some node could run alone, and none once the class's labels are required too. A pod
  // that no node could run anyway is not the class's doing.
  if (placement_satisfiable(selector, terms, &label_values) ||
      !placement_satisfiable(selector, terms, nullptr)) {
    return std::nullopt;
  }

  // nodeSelector is ANDed with the required affinity: one label with a value outside the
  // class's values makes every node of the class ineligible.
  if (selector != nullptr) {
    for (const auto& [key, values] : label_values) {
      const Json* v = find_member(*selector, key);
      if (v == nullptr || !v->is_string()) continue;
      const std::string& pod_value = v->get_ref<const std::string&>();
      if (contains(values, pod_value)) continue;
      return "nodeSelector " + key + "=" + pod_value + " allows none of the class's " + key +
             " values [" + join(values) + "]";
    }
  }

  if (terms == nullptr) return std::nullopt;  // unreachable: only the nodeSelector can conflict
  // nodeSelectorTerms are ORed: each (non-empty) term is named with why it admits no class
  // node — a class label none of whose values it allows, or else the label on which it
  // contradicts itself or the pod's nodeSelector once the class is required.
  std::string reasons;
  for (size_t i = 0; i < terms->size(); ++i) {
    const Json& term = (*terms)[i];
    if (!term.is_object() || is_empty_node_selector_term(term)) continue;
    if (!reasons.empty()) reasons += "; ";
    reasons += term_conflict(term, i, selector, label_values);
  }
  return "required node affinity " + reasons;
}

Json toleration_for(const Taint& taint) {
  Json t = empty_object();
  t["key"] = taint.key;
  if (taint.value.empty()) {
    t["operator"] = "Exists";
  } else {
    t["operator"] = "Equal";
    t["value"] = taint.value;
  }
  if (!taint.effect.empty()) t["effect"] = taint.effect;
  return t;
}

std::vector<std::string_view> requirement_values(const Json& requirement) {
  std::vector<std::string_view> values;
  const Json* list = find_member(requirement, "values");
  if (list == nullptr || !list->is_array()) return values;
  for (const Json& v : *list) {
    if (v.is_string()) values.emplace_back(v.get_ref<const std::string&>());
  }
  return values;
}

}  // namespace gpuadmit
