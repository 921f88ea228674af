#include "render/native_policies.h"

#include <algorithm>

#include "engine/dra.h"
#include "engine/workload_kinds.h"
#include "render/cluster_objects.h"
#include "render/native_cel.h"
#include "render/native_fast_path.h"
#include "render/native_model.h"
#include "render/native_mutations.h"
#include "render/native_rules.h"
#include "render/native_table.h"
#include "render/native_tenants.h"
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

// Every CEL string of `value` through `rewrite`, when it reads the tenant.
template <typename Rewrite>
void rewrite_reads(Json& value, const Rewrite& rewrite) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.find("variables.t") != std::string::npos) value = rewrite(text);
  } else if (value.is_structured()) {
    for (Json& v : value) rewrite_reads(v, rewrite);
  }
}

// The stand-in variable `t` of `spec` replaced by the columns the policy reads
// (render/native_tenants.h).
void add_columns(const CompiledPolicy& policy, Json& spec, TenantFields fields, bool audit_only) {
  Json& vars = spec["variables"];
  size_t at = 0;
  while (at < vars.size() && vars[at]["name"] != "t") ++at;
  if (at == vars.size()) return;
  vars.erase(vars.begin() + static_cast<std::ptrdiff_t>(at));
  rewrite_reads(spec, [](const std::string& text) { return columnar(text); });
  TenantRecordFilter filter = members_read(spec.dump());
  filter.audit_only = audit_only;
  std::set<std::string> indexed;
  Json columns = tenant_columns(policy, fields, filter, indexed);
  if (!indexed.empty()) {
    rewrite_reads(spec, [&](const std::string& text) { return indexed_reads(text, indexed); });
  }
  vars.insert(vars.begin() + static_cast<std::ptrdiff_t>(at), columns.begin(), columns.end());
}

Json condition(std::string_view name, std::string expression) {
  return {{"name", name}, {"expression", std::move(expression)}};
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

// The fast path (render/native_fast_path.h): a plain object never reaches the full policies.
Json concerns_gpus(const CompiledPolicy& policy) {
  return condition("gpuadmit-concerns-gpus", "!" + plain_object(policy));
}

}  // namespace

NativeScope native_scope(const CompiledPolicy& policy, const NativeOptions& options) {
  WebhookTarget target;
  target.ns = options.release_namespace;
  NativeScope scope;
  scope.namespace_selector = {
      {"matchExpressions", Json::array({{{"key", kNamespaceLabel},
                                         {"operator", "NotIn"},
                                         {"values", excluded_namespaces(policy, target)}}})}};
  scope.match_conditions = Json::array();
  if (std::optional<Json> exempt = not_exempt(policy)) scope.match_conditions.push_back(*exempt);
  return scope;
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

Json metadata(std::string_view name, const NativeOptions& options, std::string_view list_key,
              const std::vector<std::string>& list) {
  std::string joined;
  for (const std::string& s : list) joined += (joined.empty() ? "" : ",") + s;
  return {{"name", name},
          {"labels", {{"app.kubernetes.io/managed-by", "gpuadmit"}}},
          {"annotations",
           {{"gpuadmit.io/native-mode", native_mode_name(options.mode)},
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
  const std::string name = "gpuadmit-" + std::string(suffix);
  // Pod UPDATEs as the validating webhook gets them (render/webhook_configuration.h): those that
  // change placement or CDI devices, judged by the same validations as a CREATE.
  Json rules = resource_rules(policy, false);
  rules.push_back(pod_update_rule());
  Json spec = {{"failurePolicy", "Fail"},
               {"matchConstraints", {{"resourceRules", rules}, {"matchPolicy", "Equivalent"}}}};
  Json conditions = scope.match_conditions;
  conditions.push_back(pod_update_condition());
  conditions.push_back(concerns_gpus(policy));
  spec["matchConditions"] = std::move(conditions);
  spec["variables"] = model_variables(policy, CelLevel::kValidating);
  spec["validations"] = std::move(validations);
  add_columns(policy, spec, TenantFields::kValidating, suffix == "audit");
  out.push_back({{"apiVersion", std::string(kApi) + "v1"},
                 {"kind", "ValidatingAdmissionPolicy"},
                 {"metadata", metadata(name, options, "gpuadmit.io/rules", ids)},
                 {"spec", std::move(spec)}});
  out.push_back({{"apiVersion", std::string(kApi) + "v1"},
                 {"kind", "ValidatingAdmissionPolicyBinding"},
                 {"metadata", metadata(name, options, "gpuadmit.io/rules", ids)},
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

// A MutatingAdmissionPolicy of `spec` and its binding, both named `name`, listing `names`.
void push_mutating(const std::string& name, const std::vector<std::string>& names, Json spec,
                   const NativeScope& scope, const NativeOptions& options, std::vector<Json>& out) {
  const std::string api = std::string(kApi) + options.mutating_api;
  out.push_back({{"apiVersion", api},
                 {"kind", "MutatingAdmissionPolicy"},
                 {"metadata", metadata(name, options, "gpuadmit.io/mutations", names)},
                 {"spec", std::move(spec)}});
  out.push_back(
      {{"apiVersion", api},
       {"kind", "MutatingAdmissionPolicyBinding"},
       {"metadata", metadata(name, options, "gpuadmit.io/mutations", names)},
       {"spec", {{"policyName", name}, {"matchResources", match_resources(scope, options)}}}});
}

void add_mutating(const CompiledPolicy& policy, const NativeScope& scope,
                  const NativeOptions& options, std::vector<Json>& out) {
  std::vector<NativeMutation> all = mutations(policy);
  if (all.empty()) return;
  const std::string name = "gpuadmit-mutate";
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
  conditions.push_back(concerns_gpus(policy));
  spec["matchConditions"] = std::move(conditions);
  spec["variables"] = model_variables(policy, CelLevel::kMutating);
  // The defaults mutation reads the perGPU products.
  if (list.dump().find("variables.pg") != std::string::npos) {
    spec["variables"].push_back({{"name", "pg"}, {"expression", per_gpu_tables(policy)}});
  }
  spec["mutations"] = std::move(list);
  spec["reinvocationPolicy"] = "IfNeeded";
  add_columns(policy, spec, TenantFields::kMutating, false);
  push_mutating(name, names, std::move(spec), scope, options, out);
}

// The plain objects' policy (render/native_fast_path.h): what the full policies'
// gpuadmit-concerns-gpus leaves out, when the webhook would mutate it, with the one mutation it
// gets. Its variables are only the tenant's, read when a tenant has `mutate: false`.
void add_plain_object_mutating(const CompiledPolicy& policy, const NativeScope& scope,
                               const NativeOptions& options, std::vector<Json>& out) {
  std::optional<Json> mutation = plain_object_mutation(policy);
  if (!mutation) return;
  const std::string name = "gpuadmit-mutate-non-gpu-pods";
  Json spec = {{"failurePolicy", "Fail"},
               {"matchConstraints",
                {{"resourceRules", plain_object_rules()}, {"matchPolicy", "Equivalent"}}}};
  Json conditions = scope.match_conditions;
  conditions.push_back(condition("gpuadmit-plain-object", plain_object(policy)));
  conditions.push_back(condition("gpuadmit-mutated-now", mutated_now()));
  spec["matchConditions"] = std::move(conditions);
  const bool reads_tenant = mutation->dump().find("variables.t") != std::string::npos;
  spec["variables"] = reads_tenant ? tenant_variables(policy) : Json::array();
  spec["mutations"] = Json::array({std::move(*mutation)});
  spec["reinvocationPolicy"] = "IfNeeded";
  if (reads_tenant) add_columns(policy, spec, TenantFields::kMutating, false);
  if (spec["variables"].empty()) spec.erase("variables");
  const std::vector<std::string> names = {"gpu-visibility"};
  push_mutating(name, names, std::move(spec), scope, options, out);
}

// `!(x)`, or `x` for `!(x)`.
std::string negated(const std::string& condition) {
  if (condition.starts_with("!(") && condition.ends_with(")")) {
    int depth = 0;
    size_t close = 1;
    for (; close < condition.size(); ++close) {
      depth += condition[close] == '(' ? 1 : condition[close] == ')' ? -1 : 0;
      if (depth == 0) break;
    }
    if (close == condition.size() - 1) return condition.substr(1);
  }
  return "!(" + condition + ")";
}

}  // namespace

std::vector<Json> native_policies(const CompiledPolicy& policy, const NativeOptions& options) {
  const NativeScope scope = native_scope(policy, options);
  constexpr Placement kPlacements[] = {Placement::kDeny, Placement::kWarn, Placement::kAudit};
  Json validations[3] = {Json::array(), Json::array(), Json::array()};
  std::vector<std::string> ids[3];
  for (NativeValidation& v : rule_validations(policy)) {
    if (options.mode == NativeMode::kFallback && !in_fallback(policy, v.id)) continue;
    std::string expression = v.validation["expression"].get<std::string>();
    // An object the webhook judges "as mutated" but the native policies never mutate
    // (variables.jo: a copy, an immutable template's UPDATE) is judged only by the rules that
    // hold on it unmutated (render/native_table.h judges_unmutated); the rest would deny what a
    // mutation fixes (docs/native.md, "Differences").
    if (!judges_unmutated(policy, v.id)) expression = "variables.jo || (" + expression + ")";
    for (int p = 0; p < 3; ++p) {
      const std::string where = placed(policy, v.id, kPlacements[p]);
      if (where == "false") continue;
      Json placed_validation = v.validation;
      placed_validation["expression"] =
          where == "true" ? expression : negated(where) + " || (" + expression + ")";
      ids[p].push_back(v.id);
      validations[p].push_back(std::move(placed_validation));
    }
  }
  std::vector<Json> out;
  add_validating(policy, scope, options, "deny", std::move(validations[0]), ids[0],
                 Json::array({"Deny"}), out);
  add_validating(policy, scope, options, "warn", std::move(validations[1]), ids[1],
                 Json::array({"Warn"}), out);
  add_validating(policy, scope, options, "audit", std::move(validations[2]), ids[2],
                 Json::array({"Warn", "Audit"}), out);
  if (options.mode == NativeMode::kFull) {
    add_mutating(policy, scope, options, out);
    add_plain_object_mutating(policy, scope, options, out);
  }
  return out;
}

}  // namespace gpuadmit::render::native
