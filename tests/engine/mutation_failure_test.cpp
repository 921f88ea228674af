// A mutator that cannot complete (engine/mutator.h MutationOutcome::failed, or an exception the
// guard turns into one): no partial edit survives — not the failing mutator's, not the earlier
// mutators' — the review gets the MUTATION finding, and enforcement.mutationFailurePolicy decides
// the answer. A test-only mutator, injected into a Pipeline beside the real ones, fails after
// writing half of what it meant to (a priorityClassName without its priority: issue 20).

#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/admission.h"
#include "engine/json_dump.h"
#include "engine/mutation_skeleton.h"
#include "engine/pipeline.h"
#include "mutators/all_mutators.h"
#include "mutators/mutator_support.h"
#include "rules/all_rules.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace mutation_failure_test {
namespace {

using testing::policy_from_yaml;

// Writes spec.priorityClassName, then fails — by outcome, or by throwing.
class HalfWritingMutator final : public Mutator {
 public:
  explicit HalfWritingMutator(bool throws) : throws_(throws) {}
  std::string_view name() const override { return "half-writer"; }
  MutationOutcome mutate(PodWriter& pod, PodContext& /*ctx*/) const override {
    return mutator_support::guarded([&]() -> MutationOutcome {
      pod.spec(SpecMember::kPriorityClassName).set("gpu-training");
      if (throws_) throw std::runtime_error("priority class vanished");
      return MutationOutcome::failed("priority class gpu-training has no value");
    });
  }

 private:
  bool throws_;
};

Pipeline pipeline_with_failure(bool throws) {
  std::vector<std::unique_ptr<const Mutator>> mutators = default_mutators();
  mutators.push_back(std::make_unique<HalfWritingMutator>(throws));  // after every real edit
  return Pipeline(std::move(mutators), default_rules());
}

std::string policy_text(const std::string& failure_policy) {
  return R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: failing}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
  priorityClasses:
    gpu-training: {value: 10000}
  tenants:
    - name: ml
      namespaces: [ml]
      defaultClass: a100
      priority: {default: gpu-training}
    - name: web
      namespaces: [web]
      allowedClasses: []
  enforcement:
    mutationFailurePolicy: )YAML" +
         failure_policy + "\n";
}

// A 1-GPU pod with its request missing: the real mutators would add the request, the class
// annotation, a toleration, node affinity and the priority.
constexpr std::string_view kPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":)"
    R"({"containers":[{"name":"c","image":"cuda","resources":{"limits":{"nvidia.com/gpu":1}}}]}})";

std::vector<std::string> findings_of(const Evaluation& e) {
  std::vector<std::string> out;
  for (const Finding& f : e.findings) {
    out.push_back(f.rule + " " + std::string(severity_name(f.severity)) + " " + f.path + " | " +
                  f.message + " | " + f.policy_path);
  }
  return out;
}

const std::string kDeniedMessage =
    "mutator half-writer failed: priority class gpu-training has no value; nothing was mutated "
    "and the object is denied (enforcement.mutationFailurePolicy: Fail)";
const std::string kAdmittedMessage =
    "mutator half-writer failed: priority class gpu-training has no value; admitted without any "
    "of gpuadmit's mutations (enforcement.mutationFailurePolicy: Ignore)";
const std::string kDenied =
    "MUTATION error spec | " + kDeniedMessage + " | spec.enforcement.mutationFailurePolicy";
const std::string kAdmitted =
    "MUTATION warn spec | " + kAdmittedMessage + " | spec.enforcement.mutationFailurePolicy";

TEST_CASE("mutation failure: Fail denies with the reason and keeps no edit", "[pipeline]") {
  const PolicyPtr policy = policy_from_yaml(policy_text("Fail"));
  const Pipeline pipeline = pipeline_with_failure(false);
  const Json pod = Json::parse(kPod);
  EvaluateOptions options;
  options.ns = "ml";
  const Evaluation e = pipeline.evaluate(pod, options, *policy);
  CHECK_FALSE(e.allowed);
  CHECK_FALSE(e.changed());
  CHECK(e.patch.empty());
  CHECK(e.patch_text.empty());
  CHECK(e.mutations.empty());
  CHECK(e.mutation_records.empty());
  CHECK(e.mutated == pod);  // what was submitted, not half of the mutation
  CHECK(findings_of(e) == std::vector<std::string>{kDenied});
  REQUIRE(e.mutation_failure.has_value());
  CHECK(e.mutation_failure->mutator == "half-writer");
  CHECK(e.mutation_failure->path == "spec");
  CHECK(e.mutation_failure->reason == "priority class gpu-training has no value");
  CHECK(e.deny_message() == "MUTATION: " + kDeniedMessage);
}

TEST_CASE("mutation failure: an exception is a failure with its text", "[pipeline]") {
  const PolicyPtr policy = policy_from_yaml(policy_text("Fail"));
  const Json pod = Json::parse(kPod);
  EvaluateOptions options;
  options.ns = "ml";
  const Evaluation e = pipeline_with_failure(true).evaluate(pod, options, *policy);
  CHECK_FALSE(e.allowed);
  CHECK(e.patch.empty());
  REQUIRE(e.mutation_failure.has_value());
  CHECK(e.mutation_failure->reason == "internal error: priority class vanished");
  REQUIRE(e.findings.size() == 1);
  CHECK(e.findings[0].message ==
        "mutator half-writer failed: internal error: priority class vanished; nothing was "
        "mutated and the object is denied (enforcement.mutationFailurePolicy: Fail)");
}

TEST_CASE("mutation failure: Ignore admits unmutated, with the rules of the object as sent",
          "[pipeline]") {
  const PolicyPtr policy = policy_from_yaml(policy_text("Ignore"));
  const Pipeline pipeline = pipeline_with_failure(false);
  const Json pod = Json::parse(kPod);
  EvaluateOptions options;
  options.ns = "ml";
  const Evaluation e = pipeline.evaluate(pod, options, *policy);
  CHECK(e.allowed);
  CHECK_FALSE(e.changed());
  CHECK(e.patch.empty());
  CHECK(e.mutations.empty());
  CHECK(e.mutated == pod);
  CHECK(findings_of(e) == std::vector<std::string>{kAdmitted});
  CHECK(e.warnings() == std::vector<std::string>{"MUTATION: " + kAdmittedMessage});

  // The rules still deny what breaks the policy: a tenant without GPUs.
  Json web = pod;
  web["metadata"]["namespace"] = "web";
  options.ns = "web";
  const Evaluation denied = pipeline.evaluate(web, options, *policy);
  CHECK_FALSE(denied.allowed);
  CHECK(denied.patch.empty());
  REQUIRE(denied.findings.size() == 2);
  CHECK(denied.findings[0].rule == "MUTATION");
  CHECK(denied.findings[0].severity == Severity::kWarn);
  CHECK(denied.findings[1].rule == "GPU003");

  // Lint asks for the error whatever the policy says.
  options.ns = "ml";
  options.apply_mutation_failure_policy = false;
  const Evaluation linted = pipeline.evaluate(pod, options, *policy);
  CHECK_FALSE(linted.allowed);
  CHECK(findings_of(linted) == std::vector<std::string>{kDenied});
}

TEST_CASE("mutation failure: in place, the object is restored exactly", "[pipeline]") {
  for (const std::string failure_policy : {"Fail", "Ignore"}) {
    INFO(failure_policy);
    const PolicyPtr policy = policy_from_yaml(policy_text(failure_policy));
    const Pipeline pipeline = pipeline_with_failure(false);
    // A Deployment with key order and members a mutator would change or add around.
    const Json original = Json::parse(
        R"({"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d","namespace":"ml"},
            "spec":{"replicas":2,"template":{"metadata":{"labels":{"app":"d"}},"spec":{
            "tolerations":[{"key":"x","operator":"Exists"}],"containers":[{"name":"c",
            "image":"cuda","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})");
    Json object = original;
    EvaluateOptions options;
    options.ns = "ml";
    options.patch_as_text = true;
    const Evaluation e = pipeline.evaluate_in_place(object, options, *policy);
    CHECK(e.patch_text.empty());
    CHECK_FALSE(e.changed());
    CHECK(dump_json(object) == dump_json(original));  // key order included
    REQUIRE(e.mutation_failure.has_value());
    CHECK(e.mutation_failure->path == "spec.template.spec");
    CHECK(e.allowed == (failure_policy == "Ignore"));

    // Judged only (--templates validate): nothing of the mutation is kept, and a failure leaves
    // the object as sent, for the rules that run on it with Ignore.
    Json judged = original;
    options.judge_only = true;
    const Evaluation j = pipeline.evaluate_in_place(judged, options, *policy);
    CHECK(dump_json(judged) == dump_json(original));
    REQUIRE(j.mutation_failure.has_value());
    CHECK(j.allowed == (failure_policy == "Ignore"));
    REQUIRE(j.findings.size() == 1);
    CHECK(j.findings[0].message ==
          (failure_policy == "Ignore" ? kAdmittedMessage : kDeniedMessage));
  }
}

TEST_CASE("mutation failure: what the API server receives", "[pipeline][admission]") {
  const Json review_json = {{"apiVersion", "admission.k8s.io/v1"},
                            {"kind", "AdmissionReview"},
                            {"request",
                             {{"uid", "u-1"},
                              {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                              {"operation", "CREATE"},
                              {"namespace", "ml"},
                              {"name", "p"},
                              {"object", Json::parse(kPod)}}}};
  const Pipeline pipeline = pipeline_with_failure(false);
  {
    const PolicyPtr policy = policy_from_yaml(policy_text("Fail"));
    const AdmissionResult r =
        handle_admission_review_text(dump_json(review_json), Endpoint::kMutate, pipeline, *policy);
    REQUIRE(r.outcome.has_value());
    CHECK(r.outcome->response.dump() ==
          R"x({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":)x"
          R"x({"uid":"u-1","allowed":false,"status":{"code":403,"reason":"Forbidden",)x"
          R"x("message":"gpuadmit denied Pod ml/p: MUTATION: )x" +
              kDeniedMessage + R"x("}}})x");
  }
  {
    const PolicyPtr policy = policy_from_yaml(policy_text("Ignore"));
    const AdmissionResult r =
        handle_admission_review_text(dump_json(review_json), Endpoint::kMutate, pipeline, *policy);
    REQUIRE(r.outcome.has_value());
    // No patch at all: not even the mutations that did complete before the failure.
    CHECK(r.outcome->response.dump() ==
          R"x({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":)x"
          R"x({"uid":"u-1","allowed":true,"warnings":["MUTATION: )x" +
              kAdmittedMessage + R"x("],"auditAnnotations":{"class":"a100"}}})x");
  }
}

// The restore undoes additions, changes and removals alike, in the original key order.
TEST_CASE("mutation failure: restore_from_skeleton undoes every kind of edit", "[pipeline]") {
  const Json original = Json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a":"1"}},
          "spec":{"nodeSelector":{"pool":"x"},"tolerations":[{"key":"t","operator":"Exists"}],
          "containers":[{"name":"c","env":[{"name":"A","value":"1"}],"image":"i"}],
          "priorityClassName":"low"}})");
  PodSpecLocation location;
  location.spec = JsonPointer("/spec");
  location.metadata = JsonPointer("/metadata");
  Json object = original;
  const PolicyPtr policy = testing::amd_gpu_policy();
  Json skeleton = mutation_skeleton(object, {location}, *policy);
  Json& spec = object["spec"];
  spec.erase("nodeSelector");                                             // removed
  spec["tolerations"].push_back(Json{{"key", "u"}});                      // grown
  spec["containers"][0]["env"][0]["value"] = "2";                         // changed
  spec["containers"][0]["resources"] = Json{{"limits", Json::object()}};  // added
  spec["priorityClassName"] = "high";
  spec["priority"] = 5;
  object["metadata"]["annotations"]["gpuadmit.io/class"] = "a100";
  restore_from_skeleton(object, skeleton);
  CHECK(dump_json(object) == dump_json(original));
}

}  // namespace
}  // namespace mutation_failure_test
}  // namespace gpuadmit
