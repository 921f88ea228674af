#pragma once
// The pipeline (SPEC §4–§5): object → pod specs → mutators (on a copy) → rules → decision.
// Pure: no HTTP, no files. Shared by `gpuadmit review`, the webhook and lint.
//
//   Pipeline pipeline(default_mutators(), default_rules());
//   Evaluation e = pipeline.evaluate(object, {.ns = "ml", .mutate = true}, *policy);
//   e.allowed; e.patch;  // RFC 6902 ops that turn `object` into e.mutated

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/claim_resolver.h"
#include "engine/context.h"
#include "engine/finding.h"
#include "engine/json.h"
#include "engine/mutator.h"
#include "engine/node_source.h"
#include "engine/rule.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

struct EvaluateOptions {
  std::string ns;  // namespace of the object (request.namespace, metadata.namespace, or default)
  Operation operation = Operation::kCreate;
  bool mutate = true;  // false: rules only (the validating webhook)
  // false: no JSON Patch is computed (lint, `--fix`: only `mutated` and changed() are needed);
  // `patch` stays empty, everything else is as with true.
  bool patch = true;
  // false: `mutated` stays null unless the mutators edited a copy of the object (lint reads it
  // only when changed), which spares copying objects that no mutator touches.
  bool copy_unchanged = true;
  // true: the patch is written as JSON text into Evaluation::patch_text (what the webhook sends,
  // byte for byte dump_json(patch)) and `patch` stays empty.
  bool patch_as_text = false;
  // Resolves the pod's DRA claim references (engine/claim_resolver.h); null: none can be
  // resolved, so a pod with claims is treated as a possible GPU pod, never as a non-GPU one.
  const ClaimResolver* claims = nullptr;
  // AdmissionRequest.userInfo.username: who submits the object ("" in lint and without a
  // review). Only the scheduler's claims may skip the claim rules (engine/dra.h
  // is_scheduler_extended_resource_claim), and an ownerReference is believed only from its
  // kind's controller (engine/controllers.h sent_by_owner_controller).
  std::string username = {};
  // false (lint): a mutator that fails is an error finding whatever the policy's
  // `enforcement.mutationFailurePolicy` says; true: the policy decides (the webhook).
  bool apply_mutation_failure_policy = true;
  // UPDATE: the object before it (AdmissionRequest.oldObject). A pod template equal to the one
  // there is not evaluated (engine/controllers.h template_unchanged).
  const Json* old_object = nullptr;
  // With `mutate`: the mutators run so that the rules judge the object as its Pods will be
  // admitted, but nothing is kept: no patch, no mutations listed, `mutated` is the input
  // (engine/controllers.h TemplateTreatment::kJudge).
  bool judge_only = false;
  // An UPDATE of a Pod's pods/ephemeralcontainers subresource: only the ephemeral containers it
  // adds to `old_object`'s are evaluated (RequestContext::ephemeral_update).
  bool ephemeral_update = false;
  // The cluster's PriorityClasses (engine/priority_classes.h); null: the policy's declarations
  // stand in for them.
  const PriorityClassSource* priority_classes = nullptr;
  // The cluster's Nodes (engine/node_source.h); null: unknown, `spec.nodeName` is not judged.
  const NodeSource* nodes = nullptr;
};

// A mutator that could not complete (engine/mutator.h MutationOutcome::failed).
struct MutationFailure {
  std::string mutator;  // Mutator::name(): "priority"
  std::string path;     // the pod spec it was mutating: "spec.template.spec"
  std::string reason;
};

// What the pipeline resolved for one pod spec (`gpuadmit fleet` reads the class the webhook
// would use): in find_pod_specs order, one per pod spec that PodView::make accepted.
struct PodSpecOutcome {
  size_t location = 0;       // index in find_pod_specs(object)
  bool gpu_pod = false;      // from the original spec (PodContext::gpu_pod)
  std::string class_name;    // resolved class, "" when none (PodContext::class_name)
  bool class_known = false;  // the class is one of the policy's
  std::string mig_profile;   // gpuadmit.io/mig-profile, "" when unset
};

struct Evaluation {
  Evaluation() = default;
  Evaluation(const Evaluation&) = default;
  Evaluation(Evaluation&&) noexcept = default;
  Evaluation& operator=(const Evaluation&) = default;
  Evaluation& operator=(Evaluation&&) noexcept = default;
  // The mutated object and the patch are freed with free_json (engine/json.h): a third of the
  // instructions of nlohmann's destructor, which stacks every node of a tree on the heap first.
  ~Evaluation();

  bool allowed = true;
  bool is_workload = false;  // the object has pod specs gpuadmit looks at
  bool exempt = false;       // exempt namespace: untouched
  bool is_claim = false;     // a DRA ResourceClaim / ResourceClaimTemplate (rules only)
  Json mutated;              // the object after mutation (a copy of the input when unchanged; see
                             // EvaluateOptions::copy_unchanged)
  Json patch = empty_array();
  std::string patch_text;  // EvaluateOptions::patch_as_text: "[...]" when changed(), else empty
  std::vector<Finding> findings;          // in pod-spec order, then rule order
  std::vector<std::string> mutations;     // mutation names applied, unique, in first-applied order
  std::vector<std::string> classes;       // resolved class names, unique, in pod-spec order
  std::vector<PodSpecOutcome> pod_specs;  // per pod spec, in pod-spec order
  std::string tenant;  // the namespace's tenant, "" when none (or exempt / not a workload)
  // Why each mutation was applied (`--explain`): in application order, one per mutator and pod
  // spec that changed something.
  std::vector<MutationRecord> mutation_records;
  // Set when a mutator failed: then no mutation is kept (`patch` is empty, `mutations` too), and
  // findings[0] is the MUTATION finding — an error that denies (mutationFailurePolicy: Fail), or
  // a warning on an object whose rules were run unmutated (Ignore).
  std::optional<MutationFailure> mutation_failure;

  // True when the object is allowed and the mutators changed it: with EvaluateOptions::patch,
  // exactly when `patch` is not empty.
  bool changed() const { return has_changes; }
  bool has_changes = false;
  // Warnings for AdmissionResponse.warnings: "GPU014: ..." for each of the first
  // kDenyMessageListed warn findings, then "gpuadmit: N more warnings" — bounded as the denial
  // is: the API server keeps 4,096 characters of warnings and cuts each to 256 once past them
  // (k8s.io/apiserver pkg/endpoints/filters/warning.go); an audited finding reads
  // "GPU003 (audit): ...".
  std::vector<std::string> warnings() const;
  // Rule ids of the audited findings, unique, in order (the "audit" audit annotation).
  std::vector<std::string> audited_rules() const;
  // The denial message: the first kDenyMessageListed deny/error findings, "; "-separated, each
  // "GPU001: ...", then "; and N more violations" — bounded, so a pod of 10,000 bad containers
  // is denied with a message of a few KB, not 372 KB (issue 38); lint lists every finding.
  std::string deny_message() const;
  static constexpr std::size_t kDenyMessageListed = 20;
};

struct PipelineRun;

class Pipeline {
 public:
  Pipeline(std::vector<std::unique_ptr<const Mutator>> mutators,
           std::vector<std::unique_ptr<const Rule>> rules);

  // Never throws for any JSON input.
  Evaluation evaluate(const Json& object, const EvaluateOptions& options,
                      const CompiledPolicy& policy) const;
  // The same evaluation for a caller that gives `object` up (the webhook, which parsed it): the
  // mutators edit it in place, so it is the mutated object afterwards (with
  // EvaluateOptions::judge_only too, though no patch says so) and Evaluation::mutated stays
  // null. The patch is the same, operation for operation: it is the diff against a
  // skeleton of the members mutators may write (engine/mutation_skeleton.h), copied before they
  // run, instead of against a copy of the whole object.
  Evaluation evaluate_in_place(Json& object, const EvaluateOptions& options,
                               const CompiledPolicy& policy) const;

  const std::vector<std::unique_ptr<const Mutator>>& mutators() const { return mutators_; }
  const std::vector<std::unique_ptr<const Rule>>& rules() const { return rules_; }

 private:
  // `in_place` is `object` itself, writable, for evaluate_in_place; nullptr for evaluate.
  Evaluation evaluate(const Json& object, Json* in_place, const EvaluateOptions& options,
                      const CompiledPolicy& policy) const;
  // One pod spec of the object, with the evaluation's state (engine/pipeline.cc).
  void evaluate_pod_spec(PipelineRun& run, size_t index) const;  // index in run.locations
  // What a mutator's failure leaves: nothing mutated, the MUTATION finding, and the answer
  // mutationFailurePolicy gives (engine/pipeline.cc).
  Evaluation fail_mutation(PipelineRun& run) const;
  // The rules' check_claim over a ResourceClaim / ResourceClaimTemplate (never mutated).
  void evaluate_claim(const Json& object, const EvaluateOptions& options,
                      const CompiledPolicy& policy, Evaluation& e) const;
  // The rules' check_queued_object over a TrainJob, AppWrapper or SparkApplication (never
  // mutated).
  void evaluate_queued_object(const Json& object, const EvaluateOptions& options,
                              const CompiledPolicy& policy, Evaluation& e) const;
  // Runs `check` for each rule the tenant does not turn off and records its violations as
  // findings, with the tenant's actions and audit mode.
  void check_object_rules(
      const CompiledPolicy& policy, const Tenant* tenant, Evaluation& e,
      const std::function<void(const Rule&, std::vector<Violation>&)>& check) const;

  std::vector<std::unique_ptr<const Mutator>> mutators_;
  std::vector<std::unique_ptr<const Rule>> rules_;
};

}  // namespace gpuadmit
