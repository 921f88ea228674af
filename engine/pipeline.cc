#include "engine/pipeline.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <variant>

#include "engine/dra.h"
#include "engine/json_diff.h"
#include "engine/mutation_skeleton.h"
#include "engine/resources.h"
#include "engine/workload.h"

namespace gpuadmit {
namespace {

void add_unique(std::vector<std::string>& list, std::string_view value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.emplace_back(value);
}

// A Pod whose controller is a DaemonSet: its pods must run on every node, GPU pools included
// (GPU009 exempts them, as the device plugin and DCGM exporter are such pods).
bool owned_by_daemonset(const Json& object) {
  const Json* metadata = find_member(object, "metadata");
  if (metadata == nullptr) return false;
  const Json* owners = find_member(*metadata, "ownerReferences");
  if (owners == nullptr || !owners->is_array()) return false;
  for (const Json& owner : *owners) {
    if (string_member(owner, "kind") != "DaemonSet") continue;
    const Json* controller = find_member(owner, "controller");
    if (controller != nullptr && controller->is_boolean() && controller->get<bool>()) return true;
  }
  return false;
}

// A pod with claims gpuadmit could not resolve may be a GPU pod (SPEC §2 "DRA": never taken for a
// non-GPU pod). It is one when it names a class or tolerates or selects a GPU pool, as a GPU pod
// would; otherwise nothing about it is a GPU pool's business, and it is left alone.
bool counts_as_gpu_pod(const PodView& pod, const PodGpuResources& gpu, const PodDra& dra,
                       const CompiledPolicy& policy) {
  if (gpu.any_positive() || dra.any_gpu) return true;
  if (!dra.any_unresolved) return false;
  return pod.setting("gpuadmit.io/class").has_value() || targets_gpu_pool(pod.spec(), policy);
}

// The enforcement field that set a rule's action, "" when none does (the rule's default): the
// tenant's rules, the policy's rules, then the rule-specific field (CompiledPolicy::action_for).
std::string enforcement_path(const CompiledPolicy& policy, const Tenant* tenant,
                             std::string_view rule_id) {
  const auto names = [&](const std::vector<std::pair<std::string, Action>>& rules) {
    return std::any_of(rules.begin(), rules.end(),
                       [&](const auto& r) { return r.first == rule_id; });
  };
  if (tenant != nullptr && names(tenant->enforcement.rules)) {
    return "spec.tenants[" + tenant->name + "].enforcement.rules." + std::string(rule_id);
  }
  if (names(policy.policy().enforcement.rules)) {
    return "spec.enforcement.rules." + std::string(rule_id);
  }
  if (rule_id == "GPU001") return "spec.enforcement.requestsEqualLimits";
  if (rule_id == "GPU009") return "spec.enforcement.nonGpuOnGpuPool";
  if (rule_id == "GPU014") return "spec.enforcement.fragmentation";
  return "";
}

}  // namespace

Severity severity_for(Action action) {
  return action == Action::kWarn ? Severity::kWarn : Severity::kDeny;
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kDeny:
      return "deny";
    case Severity::kWarn:
      return "warn";
    case Severity::kError:
      return "error";
  }
  return "deny";
}

std::vector<std::string> Evaluation::warnings() const {
  std::vector<std::string> out;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kWarn)
      out.push_back(f.rule + (f.audit ? " (audit): " : ": ") + f.message);
  }
  return out;
}

std::vector<std::string> Evaluation::audited_rules() const {
  std::vector<std::string> out;
  for (const Finding& f : findings) {
    if (f.audit) add_unique(out, f.rule);
  }
  return out;
}

std::string Evaluation::deny_message() const {
  std::string out;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kWarn) continue;
    if (!out.empty()) out += "; ";
    out += f.rule + ": " + f.message;
  }
  return out;
}

Pipeline::Pipeline(std::vector<std::unique_ptr<const Mutator>> mutators,
                   std::vector<std::unique_ptr<const Rule>> rules)
    : mutators_(std::move(mutators)), rules_(std::move(rules)) {}

Evaluation Pipeline::evaluate(const Json& object, const EvaluateOptions& options,
                              const CompiledPolicy& policy) const {
  return evaluate(object, nullptr, options, policy);
}

Evaluation Pipeline::evaluate_in_place(Json& object, const EvaluateOptions& options,
                                       const CompiledPolicy& policy) const {
  return evaluate(object, &object, options, policy);
}

Evaluation Pipeline::evaluate(const Json& object, Json* in_place, const EvaluateOptions& options,
                              const CompiledPolicy& policy) const {
  Evaluation e;
  // The object is copied only once a mutator may change it: until then the pod specs are read
  // in place (PodView needs a non-const Json, but nothing edits `object`). In place, the
  // "copy" is the skeleton of what mutators may write, and the mutators edit `object` itself.
  bool copied = false;
  Json skeleton;
  std::vector<PodSpecLocation> locations;
  auto copy = [&] {
    if (in_place != nullptr) {
      skeleton = mutation_skeleton(object, locations);
    } else {
      e.mutated = object;
    }
    copied = true;
  };
  auto keep_unchanged = [&] {
    if (!copied && options.copy_unchanged && in_place == nullptr) e.mutated = object;
  };
  if (!object.is_object()) {
    keep_unchanged();
    return e;
  }
  if (policy.is_exempt(options.ns)) {
    e.exempt = true;
    keep_unchanged();
    return e;
  }
  if (is_claim_object(string_member(object, "apiVersion"), string_member(object, "kind"))) {
    evaluate_claim(object, options, policy, e);
    keep_unchanged();
    return e;
  }
  locations = find_pod_specs(object, policy);
  if (locations.empty()) {
    keep_unchanged();
    return e;
  }
  e.is_workload = true;
  // With several pod specs, one's mutators could edit what the next one reads: copy up front.
  if (options.mutate && locations.size() > 1) copy();

  RequestContext request;
  request.policy = &policy;
  request.ns = options.ns;
  request.api_version = std::string(string_member(object, "apiVersion"));
  request.kind = std::string(string_member(object, "kind"));
  request.name = object_name(object);
  request.operation = options.operation;
  request.daemonset_owned = owned_by_daemonset(object);
  const Tenant* tenant = policy.tenant_for(options.ns);
  if (tenant != nullptr) e.tenant = tenant->name;
  // Staged rollout (docs/rollout.md): a tenant may keep its pod specs unmutated.
  const bool mutate = options.mutate && (tenant == nullptr || tenant->enforcement.mutate);

  std::vector<Violation> violations;
  for (const PodSpecLocation& location : locations) {
    Json& target = in_place != nullptr ? *in_place : copied ? e.mutated : const_cast<Json&>(object);
    auto made = PodView::make(target, location);
    if (auto* error = std::get_if<std::string>(&made)) {
      e.findings.push_back(Finding{"PODSPEC", Severity::kError,
                                   "cannot interpret the pod spec: " + *error +
                                       "; fix the manifest so that it is a valid PodSpec",
                                   location.path});
      continue;
    }
    PodView& pod = std::get<PodView>(made);
    PodContext ctx;
    ctx.request = &request;
    ctx.policy = &policy;
    ctx.tenant = tenant;
    // Read once for is_gpu_pod and, when nothing is mutated, for the rules too.
    std::optional<PodGpuResources> gpu(std::in_place, pod, policy);
    const PodDra dra = resolve_pod_claims(pod, policy, options.claims, options.ns);
    ctx.dra = &dra;
    ctx.gpu_pod = counts_as_gpu_pod(pod, *gpu, dra, policy);
    resolve_pod_context(pod, ctx);
    if (mutate && std::any_of(mutators_.begin(), mutators_.end(),
                              [&](const auto& m) { return m->may_change(ctx); })) {
      if (!copied) {
        copy();
        if (in_place == nullptr) pod.retarget(e.mutated);
      }
      PodWriter writer(pod);
      for (const auto& mutator : mutators_) {
        ctx.policy_paths.clear();
        if (!mutator->mutate(writer, ctx)) continue;
        add_unique(ctx.mutations, mutator->name());
        if (ctx.policy_paths.empty()) ctx.policy_paths.emplace_back();
        for (std::string& path : ctx.policy_paths) {
          e.mutation_records.push_back(
              MutationRecord{std::string(mutator->name()), std::move(path)});
        }
      }
      for (const std::string& m : ctx.mutations) add_unique(e.mutations, m);
      gpu.emplace(pod, policy);  // the mutators may have moved or changed what it points to
    }
    ctx.gpu_resources = &*gpu;
    if (ctx.gpu_pod && !ctx.class_name.empty()) add_unique(e.classes, ctx.class_name);
    for (const auto& rule : rules_) {
      const Action action = policy.action_for(tenant, rule->id(), rule->default_action());
      if (action == Action::kOff) continue;
      violations.clear();
      rule->check(pod, ctx, violations);
      // Audit mode: what would deny warns instead, marked as audited.
      const bool audit = tenant != nullptr && tenant->enforcement.audit && action != Action::kWarn;
      for (Violation& v : violations) {
        std::string because = v.policy_path.empty() ? enforcement_path(policy, tenant, rule->id())
                                                    : std::move(v.policy_path);
        e.findings.push_back(
            Finding{std::string(rule->id()), audit ? Severity::kWarn : severity_for(action),
                    std::move(v.message), std::move(v.path), std::move(because), audit});
      }
    }
  }

  e.allowed = std::none_of(e.findings.begin(), e.findings.end(),
                           [](const Finding& f) { return f.severity != Severity::kWarn; });
  // Uncopied, the object is unchanged: no diff.
  if (options.mutate && copied) {
    // One diff at the end (STYLE.md §5), in one walk that also tells whether the patch
    // reproduces the mutated object: a patch that would not is never sent.
    // A denied object sends no patch: only whether it would reproduce is needed.
    const PatchForm form = !options.patch || !e.allowed ? PatchForm::kNone
                           : options.patch_as_text      ? PatchForm::kText
                                                        : PatchForm::kJson;
    JsonDiff diff = in_place != nullptr ? json_diff(skeleton, *in_place, form)
                                        : json_diff(object, e.mutated, form);
    free_json(skeleton);
    if (!diff.equal) {
      // json_diff knows whether its patch reproduces the mutated object (tests/engine/
      // json_diff_test.cpp holds it to applying the patch with Json::patch), so the patch is not
      // applied again here: that was a second deep copy and a second full comparison.
      if (form == PatchForm::kJson) e.patch = std::move(diff.patch);
      if (form == PatchForm::kText) e.patch_text = std::move(diff.patch_text);
      if (diff.reproduces) {
        e.has_changes = true;
      } else {
        e.patch = Json::array();
        e.patch_text.clear();
        if (in_place == nullptr) e.mutated = object;  // in place, the edits stay: nothing is sent
        e.allowed = false;
        e.findings.push_back(
            Finding{"PATCH", Severity::kError,
                    "internal error: the computed JSON Patch does not reproduce the "
                    "mutated object; report this object to the gpuadmit maintainers",
                    ""});
      }
    }
  }
  if (!e.allowed) {
    e.patch = Json::array();
    e.patch_text.clear();
    e.has_changes = false;
  }
  keep_unchanged();
  return e;
}

void Pipeline::evaluate_claim(const Json& object, const EvaluateOptions& options,
                              const CompiledPolicy& policy, Evaluation& e) const {
  e.is_claim = true;
  // The spec of ResourceClaims and their templates is immutable: CREATE is where it is decided.
  if (options.operation != Operation::kCreate) return;
  const std::string_view kind = string_member(object, "kind");
  if (const Json* metadata = find_member(object, "metadata")) {
    const Json* annotations = find_member(*metadata, "annotations");
    // The scheduler's claim for an extended-resource pod (DeviceClass extendedResourceName):
    // the pod was counted as asking for the extended resource; counting the claim too would
    // count its GPUs twice, and denying it would leave an admitted pod unschedulable.
    if (annotations != nullptr &&
        string_member(*annotations, kExtendedResourceClaimAnnotation) == "true") {
      return;
    }
  }
  std::string spec_path;
  const Json* spec = claim_spec_of(object, kind, &spec_path);
  if (spec == nullptr) return;  // nothing requested: the API server validates the shape
  const std::vector<DraRequest> requests = claim_requests(*spec, spec_path);
  ClaimContext ctx;
  ctx.policy = &policy;
  ctx.tenant = policy.tenant_for(options.ns);
  ctx.ns = options.ns;
  ctx.kind = kind;
  ctx.requests = &requests;
  ctx.spec_path = spec_path;
  std::vector<Violation> violations;
  for (const auto& rule : rules_) {
    const Action action = policy.action_for(rule->id(), rule->default_action());
    if (action == Action::kOff) continue;
    violations.clear();
    rule->check_claim(object, ctx, violations);
    for (Violation& v : violations) {
      e.findings.push_back(Finding{std::string(rule->id()), severity_for(action),
                                   std::move(v.message), std::move(v.path)});
    }
  }
  e.allowed = std::none_of(e.findings.begin(), e.findings.end(),
                           [](const Finding& f) { return f.severity != Severity::kWarn; });
}

}  // namespace gpuadmit
