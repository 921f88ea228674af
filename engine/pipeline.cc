#include "engine/pipeline.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <variant>

#include "engine/controllers.h"
#include "engine/dra.h"
#include "engine/json_diff.h"
#include "engine/kueue.h"
#include "engine/mutation_skeleton.h"
#include "engine/resources.h"
#include "engine/workload.h"
#include "engine/workload_kinds.h"

namespace gpuadmit {
namespace {

template <typename String>
void add_unique(std::vector<String>& list, std::string_view value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.emplace_back(value);
}

// The names of the ephemeral containers `object` has and `old_object` has not: those an UPDATE
// of pods/ephemeralcontainers adds (existing ones cannot change: ValidatePodEphemeralContainers
// Update, pkg/apis/core/validation).
std::vector<std::string> added_ephemeral_containers(const Json& object, const Json* old_object) {
  auto names = [](const Json* pod) {
    std::vector<std::string> out;
    const Json* spec = pod != nullptr ? find_member(*pod, "spec") : nullptr;
    const Json* list = spec != nullptr ? find_member(*spec, "ephemeralContainers") : nullptr;
    if (list == nullptr || !list->is_array()) return out;
    for (const Json& c : *list) out.emplace_back(string_member(c, "name"));
    return out;
  };
  const std::vector<std::string> before = names(old_object);
  std::vector<std::string> added;
  for (std::string& name : names(&object)) {
    if (std::find(before.begin(), before.end(), name) == before.end()) {
      added.push_back(std::move(name));
    }
  }
  return added;
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

Evaluation::~Evaluation() {
  free_json(mutated);
  free_json(patch);
}

std::vector<std::string> Evaluation::warnings() const {
  std::vector<std::string> out;
  std::size_t more = 0;
  for (const Finding& f : findings) {
    if (f.severity != Severity::kWarn) continue;
    if (out.size() == kDenyMessageListed) {
      ++more;
      continue;
    }
    out.push_back(f.rule + (f.audit ? " (audit): " : ": ") + f.message);
  }
  if (more > 0) out.push_back("gpuadmit: " + std::to_string(more) + " more warnings");
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
  std::size_t listed = 0;
  std::size_t more = 0;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kWarn) continue;
    if (listed == kDenyMessageListed) {
      ++more;
      continue;
    }
    if (!out.empty()) out += "; ";
    out += f.rule + ": " + f.message;
    ++listed;
  }
  if (more > 0) out += "; and " + std::to_string(more) + " more violations";
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

// One evaluation's state, carried from step to step (declared in engine/pipeline.h).
struct PipelineRun {
  PipelineRun(const Json& object, Json* in_place, const EvaluateOptions& options,
              const CompiledPolicy& policy)
      : object(object), in_place(in_place), options(options), policy(policy) {}

  const Json& object;
  Json* in_place;  // `object` itself, writable (evaluate_in_place); nullptr for evaluate
  const EvaluateOptions& options;
  const CompiledPolicy& policy;
  Evaluation e;
  std::vector<PodSpecLocation> locations;
  // The object is copied only once a mutator may change it: until then the pod specs are read in
  // place. In place, nothing is copied: the mutators edit `object` itself and record what they
  // reach in `skeleton`, what the patch is the diff against.
  bool copied = false;
  std::optional<MutationSkeleton> skeleton;
  RequestContext request;
  const Tenant* tenant = nullptr;
  bool mutate = false;                     // the options ask for mutation and the tenant allows it
  bool gpu_pod_spec_seen = false;          // a pod spec evaluated so far is a GPU pod
  std::optional<MutationFailure> failure;  // a mutator failed: the evaluation stops there

  // What the pod views read: the object as the mutators leave it.
  const Json& current() const {
    return in_place != nullptr ? *in_place : copied ? e.mutated : object;
  }
  // What the mutators write: only once copy() ran.
  Json& writable() { return in_place != nullptr ? *in_place : e.mutated; }

  void copy() {
    // A copy is diffed against the object itself: recording what the mutators reach costs more
    // than the whole diff saves once everything is copied anyway (docs/performance.md). In
    // place, the skeleton is the only "before" there is — for the patch, and for undoing a
    // failing mutator's edits (fail_mutation), judged only too.
    if (in_place == nullptr) {
      e.mutated = object;
    } else {
      skeleton.emplace(*in_place);
    }
    copied = true;
  }
  MutationSkeleton* recorder() { return skeleton ? &*skeleton : nullptr; }
  void free_skeleton() {
    if (skeleton) free_json(skeleton->json());
  }
  // An UPDATE's pod template that did not change, and whose Kueue queue did not either: not
  // evaluated. A queue label dropped outside the template (a CronJob's jobTemplate, a Job's own
  // labels) takes the workload out of Kueue: GPU025 judges it (rules/queue_required.cc).
  bool unchanged(size_t index) const {
    return options.old_object != nullptr && options.operation == Operation::kUpdate &&
           !options.ephemeral_update && !judge_every_template &&
           template_unchanged(object, *options.old_object, locations[index]) &&
           !queue_changed(index);
  }
  // changed_behind_controller() of an UPDATE, decided once per object (start_request).
  bool judge_every_template = false;
  // A controller gained, a controller's child detached, or its spec changed by someone else
  // (engine/controllers.h controller_gained, engine/kueue.h child_update): GPU025 judges it, so
  // every pod spec is evaluated.
  bool changed_behind_controller() const {
    if (!options.username.empty() && controller_gained(object, *options.old_object)) return true;
    const std::optional<ChildUpdate> child =
        child_update(object, *options.old_object, policy, options.username);
    return child && (child->detached || child->spec_changed);
  }
  // The queue or the WorkloadPriorityClass label (GPU010) changed where Kueue reads them.
  bool queue_changed(size_t index) const {
    const std::optional<QueueSite> site =
        kueue_queue_site(object, locations[index], policy, options.username);
    if (!site) return false;
    for (const std::string_view key : {kQueueNameLabel, kWorkloadPriorityClassLabel}) {
      if (kueue_label(object, site->metadata, key) !=
          kueue_label(*options.old_object, site->metadata, key)) {
        return true;
      }
    }
    return false;
  }
  void keep_unchanged() {
    if (!copied && options.copy_unchanged && in_place == nullptr) e.mutated = object;
  }
};

namespace {

using Run = PipelineRun;

enum class ObjectKind { kOther, kClaim, kQueuedWithoutPodSpecs, kWorkload };

// What the pipeline does with the object: nothing (not an object, an exempt namespace, no pod
// specs), the claim rules (a DRA claim), the queue rule (a TrainJob, an AppWrapper), or mutate
// and check its pod specs.
ObjectKind classify(Run& run) {
  if (!run.object.is_object()) return ObjectKind::kOther;
  // Exemption exempt-namespaces (docs/security.md): the policy's enforcement.exempt.namespaces.
  if (run.policy.is_exempt(run.options.ns)) {
    run.e.exempt = true;
    return ObjectKind::kOther;
  }
  if (is_claim_object(string_member(run.object, "apiVersion"), string_member(run.object, "kind"))) {
    return ObjectKind::kClaim;
  }
  run.locations = find_pod_specs(run.object, run.policy);
  if (run.locations.empty()) {
    return queued_without_pod_specs(string_member(run.object, "apiVersion"),
                                    string_member(run.object, "kind"))
               ? ObjectKind::kQueuedWithoutPodSpecs
               : ObjectKind::kOther;
  }
  run.e.is_workload = true;
  return ObjectKind::kWorkload;
}

void start_request(Run& run) {
  const Json& object = run.object;
  RequestContext& request = run.request;
  request.policy = &run.policy;
  request.ns = run.options.ns;
  request.api_version = std::string(string_member(object, "apiVersion"));
  request.kind = std::string(string_member(object, "kind"));
  request.name = object_name(object);
  request.operation = run.options.operation;
  request.daemonset_owned = controlled_by_daemonset(object);
  request.username = run.options.username;
  request.judge_only = run.options.judge_only;
  if (run.options.operation == Operation::kUpdate) {
    request.old_object = run.options.old_object;
    run.judge_every_template = run.options.old_object != nullptr && run.changed_behind_controller();
  }
  if (run.options.ephemeral_update) {
    request.ephemeral_update = true;
    request.added_ephemeral_containers = added_ephemeral_containers(object, run.options.old_object);
  }
  request.priority_classes = run.options.priority_classes;
  request.nodes = run.options.nodes;
  run.tenant = run.policy.tenant_for(run.options.ns);
  if (run.tenant != nullptr) run.e.tenant = run.tenant->name;
  // Staged rollout (docs/rollout.md): a tenant may keep its pod specs unmutated.
  run.mutate = run.options.mutate && (run.tenant == nullptr || run.tenant->enforcement.mutate);
}

// The mutators in order over one pod spec, each recorded with why it applied (`--explain`). A
// mutator that fails stops the evaluation: run.failure says which and why.
void apply_mutators(Run& run, const std::vector<std::unique_ptr<const Mutator>>& mutators,
                    PodView& pod, PodContext& ctx) {
  if (!run.copied) {
    run.copy();
    pod.retarget(run.current());
  }
  PodWriter writer(pod, run.writable(), run.recorder());
  for (const auto& mutator : mutators) {
    if (run.request.ephemeral_update && !mutator->evaluates_added_ephemeral_containers()) continue;
    ctx.policy_paths.clear();
    MutationOutcome outcome = mutator->mutate(writer, ctx);
    if (outcome.is_failed()) {
      run.failure = MutationFailure{std::string(mutator->name()), pod.location().path,
                                    std::move(outcome.reason)};
      return;
    }
    if (!outcome.is_applied()) continue;
    add_unique(ctx.mutations, mutator->name());
    if (ctx.policy_paths.empty()) ctx.policy_paths.emplace_back();
    for (std::string& path : ctx.policy_paths) {
      run.e.mutation_records.push_back(
          MutationRecord{std::string(mutator->name()), std::move(path)});
    }
  }
  for (const std::string_view m : ctx.mutations) add_unique(run.e.mutations, m);
}

// The rules over one pod spec, with the severity the policy (and audit mode) gives each.
void check_rules(Run& run, const std::vector<std::unique_ptr<const Rule>>& rules,
                 const PodView& pod, const PodContext& ctx) {
  std::vector<Violation> violations;
  for (const auto& rule : rules) {
    if (run.request.ephemeral_update && !rule->evaluates_added_ephemeral_containers()) continue;
    const Action action = run.policy.action_for(run.tenant, rule->id(), rule->default_action());
    if (action == Action::kOff) continue;
    violations.clear();
    rule->check(pod, ctx, violations);
    // Audit mode: what would deny warns instead, marked as audited.
    const bool audit =
        run.tenant != nullptr && run.tenant->enforcement.audit && action != Action::kWarn;
    for (Violation& v : violations) {
      std::string because = v.policy_path.empty()
                                ? enforcement_path(run.policy, run.tenant, rule->id())
                                : std::move(v.policy_path);
      run.e.findings.push_back(
          Finding{std::string(rule->id()), audit ? Severity::kWarn : severity_for(action),
                  std::move(v.message), std::move(v.path), std::move(because), audit});
    }
  }
}

// One diff at the end (STYLE.md §5), in one walk that also tells whether the patch reproduces
// the mutated object: a patch that would not is never sent. A denied object sends no patch:
// only whether it would reproduce is needed.
void diff_mutations(Run& run) {
  Evaluation& e = run.e;
  const PatchForm form = !run.options.patch || !e.allowed ? PatchForm::kNone
                         : run.options.patch_as_text      ? PatchForm::kText
                                                          : PatchForm::kJson;
  JsonDiff diff = run.in_place != nullptr ? json_diff(run.skeleton->json(), *run.in_place, form)
                                          : json_diff(run.object, e.mutated, form);
  run.free_skeleton();
  if (diff.equal) return;
  // json_diff knows whether its patch reproduces the mutated object (tests/engine/
  // json_diff_test.cpp holds it to applying the patch with Json::patch), so the patch is not
  // applied again here: that was a second deep copy and a second full comparison.
  if (form == PatchForm::kJson) e.patch = std::move(diff.patch);
  if (form == PatchForm::kText) e.patch_text = std::move(diff.patch_text);
  if (diff.reproduces) {
    e.has_changes = true;
    return;
  }
  e.patch = empty_array();
  e.patch_text.clear();
  if (run.in_place == nullptr) e.mutated = run.object;  // in place, the edits stay: none is sent
  e.allowed = false;
  e.findings.push_back(Finding{"PATCH", Severity::kError,
                               "internal error: the computed JSON Patch does not reproduce the "
                               "mutated object; report this object to the gpuadmit maintainers",
                               ""});
}

// EvaluateOptions::judge_only: the mutators ran for the rules' sake; none of it is kept.
void drop_mutations(Run& run) {
  Evaluation& e = run.e;
  e.mutations.clear();
  e.mutation_records.clear();
  e.has_changes = false;
  if (run.in_place == nullptr) e.mutated = Json();
  run.copied = false;  // keep_unchanged() copies the input when the caller asks for it
}

bool no_denial(const Evaluation& e) {
  return std::none_of(e.findings.begin(), e.findings.end(),
                      [](const Finding& f) { return f.severity != Severity::kWarn; });
}

}  // namespace

Evaluation Pipeline::evaluate(const Json& object, Json* in_place, const EvaluateOptions& options,
                              const CompiledPolicy& policy) const {
  Run run(object, in_place, options, policy);
  const ObjectKind kind = classify(run);
  if (kind == ObjectKind::kClaim) evaluate_claim(object, options, policy, run.e);
  if (kind == ObjectKind::kQueuedWithoutPodSpecs) {
    evaluate_queued_object(object, options, policy, run.e);
  }
  if (kind != ObjectKind::kWorkload) {
    run.keep_unchanged();
    return std::move(run.e);
  }
  // With several pod specs, one's mutators could edit what the next one reads: copy up front.
  if (options.mutate && run.locations.size() > 1) run.copy();
  start_request(run);
  for (size_t index = 0; index < run.locations.size() && !run.failure; ++index) {
    if (!run.unchanged(index)) evaluate_pod_spec(run, index);
  }
  if (run.failure) return fail_mutation(run);
  run.e.allowed = no_denial(run.e);
  // Uncopied, the object is unchanged: no diff. Judged only, nothing is kept.
  if (options.judge_only) {
    drop_mutations(run);
  } else if (options.mutate && run.copied) {
    diff_mutations(run);
  }
  if (!run.e.allowed) {
    run.e.patch = empty_array();
    run.e.patch_text.clear();
    run.e.has_changes = false;
  }
  run.keep_unchanged();
  return std::move(run.e);
}

// One pod spec: its view (or a PODSPEC error), its context, the mutators, then the rules.
void Pipeline::evaluate_pod_spec(PipelineRun& run, size_t index) const {
  const PodSpecLocation& location = run.locations[index];
  auto made = PodView::make(run.current(), location);
  if (!made) {
    run.e.findings.push_back(Finding{"PODSPEC", Severity::kError,
                                     "cannot interpret the pod spec: " + made.error() +
                                         "; fix the manifest so that it is a valid PodSpec",
                                     location.path});
    return;
  }
  PodView& pod = *made;
  PodContext ctx;
  ctx.request = &run.request;
  ctx.policy = &run.policy;
  ctx.tenant = run.tenant;
  // Read once for is_gpu_pod and, when nothing is mutated, for the rules too.
  std::optional<PodGpuResources> gpu(std::in_place, pod, run.policy);
  const PodDra dra = resolve_pod_claims(pod, run.policy, run.options.claims, run.options.ns);
  ctx.dra = &dra;
  ctx.gpu_pod = counts_as_gpu_pod(pod, *gpu, dra, run.policy);
  ctx.earlier_gpu_pod_spec = run.gpu_pod_spec_seen;
  run.gpu_pod_spec_seen = run.gpu_pod_spec_seen || ctx.gpu_pod;
  resolve_pod_context(pod, ctx);
  run.e.pod_specs.push_back(PodSpecOutcome{index, ctx.gpu_pod, ctx.class_name,
                                           ctx.gpu_class != nullptr, ctx.mig_profile});
  if (run.mutate && std::any_of(mutators_.begin(), mutators_.end(),
                                [&](const auto& m) { return m->may_change(ctx); })) {
    apply_mutators(run, mutators_, pod, ctx);
    if (run.failure) return;       // nothing of this object is kept, nor checked (fail_mutation)
    gpu.emplace(pod, run.policy);  // the mutators may have moved or changed what it points to
  }
  ctx.gpu_resources = &*gpu;
  if (ctx.gpu_pod && !ctx.class_name.empty()) add_unique(run.e.classes, ctx.class_name);
  check_rules(run, rules_, pod, ctx);
}

// A mutator could not complete. Whatever any mutator wrote is dropped — the object is evaluated
// and answered as it was submitted — so no partial edit (a priorityClassName without its
// priority) can ever be sent. The MUTATION finding comes first; then, by the policy's
// enforcement.mutationFailurePolicy:
//   Fail (default): the object is denied with it (severity error) and nothing else is checked;
//   Ignore: the rules run on the unmutated object, as the validating webhook would see it, and
//     decide; the finding is a warning, and no patch is sent.
// Lint (EvaluateOptions::apply_mutation_failure_policy false) always reports it as the error.
Evaluation Pipeline::fail_mutation(PipelineRun& run) const {
  MutationFailure failure = std::move(*run.failure);
  if (run.in_place != nullptr && run.skeleton)
    restore_from_skeleton(*run.in_place, run.skeleton->json());
  run.free_skeleton();
  const bool fail_open =
      run.options.apply_mutation_failure_policy &&
      run.policy.policy().enforcement.mutation_failure_policy == FailurePolicy::kIgnore;
  Evaluation e;
  if (fail_open) {
    EvaluateOptions rules_only = run.options;
    rules_only.mutate = false;
    e = evaluate(run.object, run.in_place, rules_only, run.policy);
  } else {
    e.is_workload = true;
    e.tenant = std::move(run.e.tenant);
    e.allowed = false;
    if (run.options.copy_unchanged && run.in_place == nullptr) e.mutated = run.object;
  }
  std::string message = "mutator " + failure.mutator + " failed: " +
                        (failure.reason.empty() ? "no reason given" : failure.reason) +
                        (fail_open ? "; admitted without any of gpuadmit's mutations "
                                     "(enforcement.mutationFailurePolicy: Ignore)"
                                   : "; nothing was mutated and the object is denied "
                                     "(enforcement.mutationFailurePolicy: Fail)");
  e.findings.insert(
      e.findings.begin(),
      Finding{"MUTATION", fail_open ? Severity::kWarn : Severity::kError, std::move(message),
              failure.path, "spec.enforcement.mutationFailurePolicy"});
  e.mutation_failure = std::move(failure);
  return e;
}

void Pipeline::evaluate_claim(const Json& object, const EvaluateOptions& options,
                              const CompiledPolicy& policy, Evaluation& e) const {
  e.is_claim = true;
  // The spec of ResourceClaims and their templates is immutable: CREATE is where it is decided.
  if (options.operation != Operation::kCreate) return;
  const std::string_view kind = string_member(object, "kind");
  // The scheduler's claim for an extended-resource pod (DeviceClass extendedResourceName): the
  // pod was counted as asking for the extended resource; counting the claim too would count its
  // GPUs twice, and denying it would leave an admitted pod unschedulable. Only the scheduler's:
  // the annotation alone is anyone's to write (a tenant would skip every claim rule with it).
  if (is_scheduler_extended_resource_claim(object, kind, options.username)) return;
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
  if (const Json* metadata = find_member(object, "metadata")) {
    ctx.name = string_member(*metadata, "name");
  }
  ctx.claims = options.claims;
  ctx.username = options.username;
  check_object_rules(policy, ctx.tenant, e, [&](const Rule& rule, std::vector<Violation>& out) {
    rule.check_claim(object, ctx, out);
  });
}

void Pipeline::evaluate_queued_object(const Json& object, const EvaluateOptions& options,
                                      const CompiledPolicy& policy, Evaluation& e) const {
  e.is_workload = true;
  QueuedObjectContext ctx;
  ctx.policy = &policy;
  ctx.tenant = policy.tenant_for(options.ns);
  ctx.operation = options.operation;
  if (options.operation == Operation::kUpdate) ctx.old_object = options.old_object;
  check_object_rules(policy, ctx.tenant, e, [&](const Rule& rule, std::vector<Violation>& out) {
    rule.check_queued_object(object, ctx, out);
  });
}

void Pipeline::check_object_rules(
    const CompiledPolicy& policy, const Tenant* tenant, Evaluation& e,
    const std::function<void(const Rule&, std::vector<Violation>&)>& check) const {
  // The tenant's enforcement.rules and audit mode, as for its pod specs (check_rules): a tenant
  // in audit mode is warned, never denied, for these objects too.
  const bool audit_mode = tenant != nullptr && tenant->enforcement.audit;
  std::vector<Violation> violations;
  for (const auto& rule : rules_) {
    const Action action = policy.action_for(tenant, rule->id(), rule->default_action());
    if (action == Action::kOff) continue;
    violations.clear();
    check(*rule, violations);
    const bool audit = audit_mode && action != Action::kWarn;
    for (Violation& v : violations) {
      std::string because = v.policy_path.empty() ? enforcement_path(policy, tenant, rule->id())
                                                  : std::move(v.policy_path);
      e.findings.push_back(
          Finding{std::string(rule->id()), audit ? Severity::kWarn : severity_for(action),
                  std::move(v.message), std::move(v.path), std::move(because), audit});
    }
  }
  e.allowed = no_denial(e);
}

}  // namespace gpuadmit
