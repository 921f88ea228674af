#include "render/native_policies.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/dra.h"
#include "engine/workload_kinds.h"
#include "render/cluster_objects.h"
#include "render/native_cel.h"
#include "render/native_model.h"
#include "render/native_mutations.h"
#include "render/native_rules.h"
#include "render/native_table.h"
#include "render/webhook_configuration.h"

namespace gpuadmit::render::native {

std::optional<NativeMode> native_mode_named(std::string_view name) {
  if (name == "full") return NativeMode::kFull;
  if (name == "fallback") return NativeMode::kFallback;
  return std::nullopt;
}

std::string_view native_mode_name(NativeMode mode) {
  return mode == NativeMode::kFull ? "full" : "fallback";
}

bool is_mutating_api(std::string_view version) { return version == "v1" || version == "v1beta1"; }
namespace {

constexpr std::string_view kApi = "admissionregistration.k8s.io/";
constexpr std::string_view kNamespaceLabel = "kubernetes.io/metadata.name";

// A pattern of letters, digits, '-' and '_' matches only itself (policies/compiled_policy.cc
// is_literal): it is compared as a string, the rest as an anchored RE2 match.
bool is_plain(std::string_view pattern) {
  return std::all_of(pattern.begin(), pattern.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// A pattern that full-matches every namespace name (after it, no later tenant has namespaces).
bool matches_all(std::string_view pattern) { return pattern == ".*" || pattern == ".+"; }

Json condition(std::string_view name, std::string expression) {
  return {{"name", name}, {"expression", std::move(expression)}};
}

Json name_selector(std::string_view op, const std::vector<std::string>& names) {
  return {{"matchExpressions",
           Json::array({{{"key", kNamespaceLabel}, {"operator", op}, {"values", names}}})}};
}

std::string dns_safe(std::string_view name) {
  std::string out;
  for (char c : name) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok) {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 200) out.resize(200);
  return out.empty() ? "tenant" : out;
}

// The exempt patterns a namespaceSelector cannot express (all but plain DNS labels), as a
// condition; nullopt when there are none.
std::optional<Json> not_exempt(const CompiledPolicy& policy) {
  std::vector<std::string> patterns;
  for (const std::string& p : policy.policy().enforcement.exempt_namespaces) {
    if (!is_literal_namespace(p)) patterns.push_back(p);
  }
  if (patterns.empty()) return std::nullopt;
  return condition("gpuadmit-not-exempt", "!" + namespace_in(patterns));
}

}  // namespace

// long: one pass over the tenants in order: each scope's conditions depend on the tenants before
// it (the first match wins), and the no-tenant scope on all of them.
std::vector<NativeScope> native_scopes(const CompiledPolicy& policy, const NativeOptions& options) {
  std::vector<NativeScope> scopes;
  WebhookTarget target;
  target.ns = options.release_namespace;
  const std::vector<std::string> excluded = excluded_namespaces(policy, target);
  const std::optional<Json> exempt = not_exempt(policy);
  std::vector<std::string> earlier;  // the patterns of the tenants before
  std::set<std::string> names{"no-tenant"};
  bool all_taken = false;
  const std::vector<Tenant>& tenants = policy.policy().tenants;
  for (size_t t = 0; t < tenants.size() && !all_taken; ++t) {
    const Tenant& tenant = tenants[t];
    NativeScope scope;
    scope.tenant = &tenant;
    scope.name = dns_safe(tenant.name);
    if (!names.insert(scope.name).second) {
      scope.name += "-" + std::to_string(t);
      names.insert(scope.name);
    }
    const bool regex = std::any_of(tenant.namespaces.begin(), tenant.namespaces.end(),
                                   [](const std::string& p) { return !is_plain(p); });
    scope.match_conditions = Json::array();
    if (!regex) {
      // Literal names only: the namespaces this tenant gets (first match; not exempt, not
      // gpuadmit's own), selected by name.
      std::vector<std::string> owned;
      for (const std::string& p : tenant.namespaces) {
        if (is_literal_namespace(p) && policy.tenant_for(p) == &tenant && !policy.is_exempt(p) &&
            p != options.release_namespace &&
            std::find(owned.begin(), owned.end(), p) == owned.end()) {
          owned.push_back(p);
        }
      }
      if (owned.empty()) continue;
      scope.namespace_selector = name_selector("In", owned);
    } else {
      scope.namespace_selector = name_selector("NotIn", excluded);
      if (std::none_of(tenant.namespaces.begin(), tenant.namespaces.end(), matches_all)) {
        scope.match_conditions.push_back(
            condition("gpuadmit-tenant", namespace_in(tenant.namespaces)));
      }
      if (!earlier.empty()) {
        scope.match_conditions.push_back(
            condition("gpuadmit-first-tenant", "!" + namespace_in(earlier)));
      }
      if (exempt) scope.match_conditions.push_back(*exempt);
    }
    earlier.insert(earlier.end(), tenant.namespaces.begin(), tenant.namespaces.end());
    all_taken = std::any_of(tenant.namespaces.begin(), tenant.namespaces.end(), matches_all);
    scopes.push_back(std::move(scope));
  }
  if (!all_taken) {
    NativeScope none;
    none.name = "no-tenant";
    none.namespace_selector = name_selector("NotIn", excluded);
    none.match_conditions = Json::array();
    if (!earlier.empty()) {
      none.match_conditions.push_back(condition("gpuadmit-no-tenant", "!" + namespace_in(earlier)));
    }
    if (exempt) none.match_conditions.push_back(*exempt);
    scopes.push_back(std::move(none));
  }
  return scopes;
}

namespace {

// The webhook configurations' kinds (webhook_configuration.cc admitted_kinds) that the native
// policies can read; for mutation, without the DRA claims (nothing to mutate) and with the kinds
// whose pod templates are immutable (the table's TemplateUpdates::kImmutable: Job, JobSet) on
// CREATE only, where a mutation on UPDATE could only make the update fail.
Json resource_rules(const CompiledPolicy& policy, bool mutating) {
  const NativeKinds kinds = native_kinds(policy);
  std::vector<AdmittedKind> admitted;
  for (AdmittedKind k : admitted_kinds(policy)) {
    const bool unreadable =
        std::any_of(kinds.not_covered.begin(), kinds.not_covered.end(), [&](const auto& n) {
          return n.first.group == k.group && n.first.kind == k.kind &&
                 n.first.api_version.substr(n.first.api_version.find('/') + 1) == k.version;
        });
    if (unreadable) continue;
    // Subresources (pods/ephemeralcontainers) are the webhook's: the native model reads a whole
    // object, and an ephemeral-containers UPDATE may change nothing else.
    if (k.resource.find('/') != std::string::npos) continue;
    if (mutating) {
      if (k.group == kResourceApiGroup) continue;
      const WorkloadKind* table =
          find_workload_kind(k.group.empty() ? "v1" : k.group + "/v1", k.kind);
      if (table != nullptr && table->template_updates == TemplateUpdates::kImmutable) {
        k.operations = {"CREATE"};
      }
    }
    admitted.push_back(std::move(k));
  }
  return webhook_rules(admitted);
}

Json metadata(std::string_view name, const NativeScope& scope, const NativeOptions& options,
              std::string_view list_key, const std::vector<std::string>& list) {
  std::string joined;
  for (const std::string& s : list) joined += (joined.empty() ? "" : ",") + s;
  return {{"name", name},
          {"labels", {{"app.kubernetes.io/managed-by", "gpuadmit"}}},
          {"annotations",
           {{"gpuadmit.io/native-mode", native_mode_name(options.mode)},
            {"gpuadmit.io/tenant", scope.tenant != nullptr ? scope.tenant->name : ""},
            {std::string(list_key), joined}}}};
}

// render/webhook_configuration.cc's selectors: the namespaces, and the opt-out label only
// when the operator chose it (NativeOptions::opt_out_label).
Json match_resources(const NativeScope& scope, const NativeOptions& options) {
  Json m = {{"namespaceSelector", scope.namespace_selector}};
  if (options.opt_out_label) {
    m["objectSelector"] = {
        {"matchExpressions",
         Json::array({{{"key", kIgnoreLabel}, {"operator", "NotIn"}, {"values", {"true"}}}})}};
  }
  return m;
}

void add_validating(const CompiledPolicy& policy, const NativeScope& scope,
                    const NativeOptions& options, std::string_view suffix, Json validations,
                    const std::vector<std::string>& ids, Json actions, std::vector<Json>& out) {
  if (validations.empty()) return;
  const std::string name = "gpuadmit-" + scope.name + "-" + std::string(suffix);
  // Pod UPDATEs as the validating webhook gets them (render/webhook_configuration.h): those that
  // change placement or CDI devices, judged by the same validations as a CREATE.
  Json rules = resource_rules(policy, false);
  rules.push_back(pod_update_rule());
  Json spec = {{"failurePolicy", "Fail"},
               {"matchConstraints", {{"resourceRules", rules}, {"matchPolicy", "Equivalent"}}}};
  Json conditions = scope.match_conditions;
  conditions.push_back(pod_update_condition());
  spec["matchConditions"] = std::move(conditions);
  spec["variables"] = model_variables(policy, scope.tenant, CelLevel::kValidating);
  spec["validations"] = std::move(validations);
  out.push_back({{"apiVersion", std::string(kApi) + "v1"},
                 {"kind", "ValidatingAdmissionPolicy"},
                 {"metadata", metadata(name, scope, options, "gpuadmit.io/rules", ids)},
                 {"spec", std::move(spec)}});
  out.push_back({{"apiVersion", std::string(kApi) + "v1"},
                 {"kind", "ValidatingAdmissionPolicyBinding"},
                 {"metadata", metadata(name, scope, options, "gpuadmit.io/rules", ids)},
                 {"spec",
                  {{"policyName", name},
                   {"validationActions", std::move(actions)},
                   {"matchResources", match_resources(scope, options)}}}});
}

// A MutatingAdmissionPolicy leaves a controller's copy alone (docs/decisions.md, "Controllers
// converge"): a non-Pod object with a controller is only judged, so that the Deployment
// controller's EqualIgnoreHash still finds its ReplicaSet. matchConditions see `object` and
// `request` but not the policy's variables (k8s.io/api admissionregistration/v1 types.go,
// MatchCondition.Expression); an object they exclude is not mutated, and not reinvoked
// (k8s.io/apiserver pkg/admission/plugin/policy/mutating dispatcher.go).
Json not_a_copy() {
  return condition("gpuadmit-not-a-copy",
                   "(request.kind.group == '' && request.kind.kind == 'Pod') || !" +
                       cel::has_controller(map_field("object", "metadata")));
}

void add_mutating(const CompiledPolicy& policy, const NativeScope& scope,
                  const NativeOptions& options, std::vector<Json>& out) {
  if (scope.tenant != nullptr && !scope.tenant->enforcement.mutate) return;
  std::vector<NativeMutation> all = mutations(policy, scope.tenant);
  if (all.empty()) return;
  const std::string name = "gpuadmit-" + scope.name + "-mutate";
  std::vector<std::string> names;
  Json list = Json::array();
  for (NativeMutation& m : all) {
    names.push_back(m.name);
    list.push_back(std::move(m.mutation));
  }
  Json spec = {{"failurePolicy", "Fail"},
               {"matchConstraints",
                {{"resourceRules", resource_rules(policy, true)}, {"matchPolicy", "Equivalent"}}}};
  Json conditions = scope.match_conditions;
  conditions.push_back(not_a_copy());
  spec["matchConditions"] = std::move(conditions);
  spec["variables"] = model_variables(policy, scope.tenant, CelLevel::kMutating);
  spec["mutations"] = std::move(list);
  spec["reinvocationPolicy"] = "IfNeeded";
  const std::string api = std::string(kApi) + options.mutating_api;
  out.push_back({{"apiVersion", api},
                 {"kind", "MutatingAdmissionPolicy"},
                 {"metadata", metadata(name, scope, options, "gpuadmit.io/mutations", names)},
                 {"spec", std::move(spec)}});
  out.push_back(
      {{"apiVersion", api},
       {"kind", "MutatingAdmissionPolicyBinding"},
       {"metadata", metadata(name, scope, options, "gpuadmit.io/mutations", names)},
       {"spec", {{"policyName", name}, {"matchResources", match_resources(scope, options)}}}});
}

}  // namespace

std::vector<Json> native_policies(const CompiledPolicy& policy, const NativeOptions& options) {
  std::vector<Json> out;
  for (const NativeScope& scope : native_scopes(policy, options)) {
    Json deny = Json::array(), warn = Json::array();
    std::vector<std::string> deny_ids, warn_ids;
    bool audited = false;
    for (NativeValidation& v : rule_validations(policy, scope.tenant)) {
      const bool holds_unmutated = in_fallback(policy, v.id);
      if (options.mode == NativeMode::kFallback && !holds_unmutated) continue;
      // An object the webhook judges "as mutated" but the native policies never mutate
      // (variables.jo: a copy, an immutable template's UPDATE) is judged only by the rules
      // that hold on unmutated objects, the fallback set; the rest would deny what a mutation
      // fixes (docs/native.md, "Differences").
      // GPU025 depends on no mutation of such an object: the webhook never labels a copy with a
      // queue either (mutators/queue_label.cc).
      if (!holds_unmutated && v.id != "GPU025") {
        v.validation["expression"] =
            "variables.jo || (" + v.validation["expression"].get<std::string>() + ")";
      }
      const bool denies = v.action == Action::kDeny && !v.audit;
      audited = audited || v.audit;
      (denies ? deny_ids : warn_ids).push_back(v.id);
      (denies ? deny : warn).push_back(std::move(v.validation));
    }
    add_validating(policy, scope, options, "deny", std::move(deny), deny_ids, Json::array({"Deny"}),
                   out);
    add_validating(policy, scope, options, "warn", std::move(warn), warn_ids,
                   audited ? Json::array({"Warn", "Audit"}) : Json::array({"Warn"}), out);
    if (options.mode == NativeMode::kFull) add_mutating(policy, scope, options, out);
  }
  return out;
}

}  // namespace gpuadmit::render::native
