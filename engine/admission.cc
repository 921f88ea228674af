#include "engine/admission.h"

#include <cstring>
#include <exception>
#include <utility>

#include "engine/controllers.h"
#include "engine/expected.h"
#include "engine/join.h"
#include "engine/json_dump.h"
#include "engine/json_parse.h"
#include "engine/pod_update.h"

namespace gpuadmit {
namespace {

constexpr int kMaxDepth = kMaxReviewDepth;
constexpr std::string_view kApiVersion = "admission.k8s.io/v1";

AdmissionResult fail(std::string message) {
  AdmissionResult r;
  r.error = AdmissionError{std::move(message)};
  return r;
}

Json response_envelope(const std::string& uid, bool allowed) {
  Json response = empty_object();
  response["uid"] = uid;
  response["allowed"] = allowed;
  Json review = empty_object();
  review["apiVersion"] = kApiVersion;
  review["kind"] = "AdmissionReview";
  review["response"] = std::move(response);
  return review;
}

std::optional<Operation> parse_operation(std::string_view op) {
  if (op == "CREATE") return Operation::kCreate;
  if (op == "UPDATE") return Operation::kUpdate;
  if (op == "DELETE") return Operation::kDelete;
  if (op == "CONNECT") return Operation::kConnect;
  return std::nullopt;
}

// What the cluster tells the evaluation, beyond the review.
struct ClusterFacts {
  const ClaimResolver* claims;
  TemplateMode templates;
  const PriorityClassSource* priority_classes;
  const NodeSource* nodes;
};

AdmissionResult answer_review(const Json& review, Json* owned, Endpoint endpoint,
                              const Pipeline& pipeline, const CompiledPolicy& policy,
                              const ClusterFacts& cluster);

}  // namespace

AdmissionResult handle_admission_review_text(std::string_view body, Endpoint endpoint,
                                             const Pipeline& pipeline, const CompiledPolicy& policy,
                                             const ClaimResolver* claims, TemplateMode templates,
                                             const PriorityClassSource* priority_classes,
                                             const NodeSource* nodes) {
  // parse_admission_review_json accepts exactly what Json::parse would and builds the same tree
  // less the objects' managedFields, which nothing here reads, at a fraction of the cost; it
  // stops at the depth limit itself. The answer is the one of a depth scan before parsing: an
  // invalid body that nests too deep after its first error is still "too deep".
  Json review;
  const JsonParseResult parsed = parse_admission_review_json(body, review, kMaxDepth);
  if (parsed == JsonParseResult::kTooDeep ||
      (parsed == JsonParseResult::kInvalid && json_depth_exceeds(body, kMaxDepth))) {
    return fail("request body nests deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  if (parsed != JsonParseResult::kOk) return fail("request body is not valid JSON");
  // The review is ours: the object is mutated in place, not copied.
  AdmissionResult result = answer_review(review, &review, endpoint, pipeline, policy,
                                         {claims, templates, priority_classes, nodes});
  // The response holds all a caller of the text API needs: the review is freed here, children
  // first (cheaper than the destructor's node stack).
  free_json(review);
  return result;
}

AdmissionResult handle_admission_review(const Json& review, Endpoint endpoint,
                                        const Pipeline& pipeline, const CompiledPolicy& policy,
                                        const ClaimResolver* claims, TemplateMode templates,
                                        const PriorityClassSource* priority_classes,
                                        const NodeSource* nodes) {
  return answer_review(review, nullptr, endpoint, pipeline, policy,
                       {claims, templates, priority_classes, nodes});
}

namespace {

// What of a request is evaluated (SPEC §7.1; docs/decisions.md, "Controllers converge" and
// "Pod UPDATE").
enum class Scope {
  kNone,       // allowed untouched: DELETE, CONNECT, a Pod's UPDATE that changes no placement
               // and keeps its controller, other subresources
  kObject,     // a CREATE, or a workload's UPDATE (only its templates that changed)
  kEphemeral,  // pods/ephemeralcontainers: the ephemeral containers the UPDATE adds
  kPodUpdate,  // a Pod's UPDATE that changes its placement, CDI devices or Kueue labels, or
               // releases its controller: judged, never patched
};

// A Pod's UPDATE is judged where it changes what decides placement or devices
// (engine/pod_update.h): a Pod must not gain by UPDATE what its CREATE would have been denied —
// a CPU pod admitted clean and gated, then given a GPU pool's toleration and nodeSelector, or a
// gated GPU pod relabeled to a WorkloadPriorityClass GPU010 denies. One that changes none of it
// (another label, an annotation, a finalizer, an image) passes untouched, so
// that a Pod admitted before a stricter policy is never refused its controllers' updates. A
// review without oldObject cannot say what changed: judged. So is one that changes its
// controller ownerReference: released or orphaned, a controller's pod may be left standalone
// (GPU025, engine/kueue.h child_update; engine/controllers.h controller_released).
// Exemption unchanged-pod-update (docs/security.md): decided by the API server's oldObject.
Scope pod_update_scope(const Json& request, const Json& object) {
  const Json* old_object = find_member(request, "oldObject");
  if (old_object == nullptr || !old_object->is_object()) return Scope::kPodUpdate;
  return pod_placement_changed(object, *old_object) || controller_released(object, *old_object)
             ? Scope::kPodUpdate
             : Scope::kNone;
}

// Exemption operations (docs/security.md): by the API server's operation and subresource.
Scope scope_of(const Json& request, const std::optional<Operation>& operation, const Json* object) {
  if (!operation || object == nullptr || !object->is_object()) return Scope::kNone;
  const std::string_view subresource = string_member(request, "subResource");
  const bool is_pod = string_member(*object, "kind") == "Pod";
  // `kubectl debug` adds containers through this subresource: the API server sends the whole
  // Pod, and keeps only its ephemeralContainers (pkg/registry/core/pod strategy.go
  // dropNonEphemeralContainerUpdates) after the mutating webhooks ran.
  if (subresource == "ephemeralcontainers") {
    return is_pod && *operation == Operation::kUpdate ? Scope::kEphemeral : Scope::kNone;
  }
  if (!subresource.empty()) return Scope::kNone;
  if (*operation == Operation::kCreate) return Scope::kObject;
  if (*operation == Operation::kUpdate)
    return is_pod ? pod_update_scope(request, *object) : Scope::kObject;
  return Scope::kNone;
}

// The pipeline's options for the scope: on UPDATE the old object (unchanged templates are not
// evaluated); whether templates are patched or only judged (engine/controllers.h); the
// validating webhook judges templates as mutated too, so that both endpoints agree on a
// template gpuadmit does not patch.
void set_scope_options(Scope scope, const Json& request, const Json& object, Endpoint endpoint,
                       TemplateMode templates, EvaluateOptions& options) {
  const Json* old_object = find_member(request, "oldObject");
  if (options.operation == Operation::kUpdate && old_object != nullptr && old_object->is_object()) {
    options.old_object = old_object;
  }
  if (scope == Scope::kEphemeral) {
    options.ephemeral_update = true;
    options.mutate = endpoint == Endpoint::kMutate;
    return;
  }
  // The rules over the Pod as it would be stored, on either endpoint, as the validating webhook
  // judges a CREATE: nothing is patched (the API server lets an UPDATE only add tolerations and,
  // while gated, selectors, so a strip could only make it fail), and no mutator runs for the
  // rules' sake either — the strip would hide the very toleration the UPDATE adds. The
  // validating webhook alone is sent these (render/webhook_configuration.h): it sees the Pod
  // after every mutating webhook, what is stored.
  if (scope == Scope::kPodUpdate) {
    options.mutate = false;
    options.judge_only = false;
    return;
  }
  const bool is_pod = string_member(object, "kind") == "Pod";
  const bool judge =
      template_treatment(object, options.operation, templates) == TemplateTreatment::kJudge;
  options.mutate = endpoint == Endpoint::kMutate || !is_pod;
  options.judge_only = endpoint == Endpoint::kValidate ? !is_pod : judge;
}

// The request of an admission.k8s.io/v1 AdmissionReview, or why `review` is not one to answer.
// What the API server always sends (k8s.io/api/admission/v1 AdmissionRequest): a uid, an
// operation, and for CREATE and UPDATE the object. A review without them is not one to allow
// blindly. An operation this version does not know passes untouched, as DELETE does: a newer API
// server may send one.
Expected<const Json*> review_request(const Json& review) {
  using Error = Unexpected<std::string>;
  if (!review.is_object()) return Error("request body is not a JSON object");
  const std::string_view api_version = string_member(review, "apiVersion");
  if (api_version != kApiVersion) {
    return Error("apiVersion must be \"admission.k8s.io/v1\", got \"" +
                 std::string(api_version.substr(0, 100)) +
                 "\" (set admissionReviewVersions: [v1] in the webhook configuration)");
  }
  if (string_member(review, "kind") != "AdmissionReview") {
    return Error("kind must be \"AdmissionReview\", got \"" +
                 std::string(string_member(review, "kind").substr(0, 100)) + "\"");
  }
  const Json* request = find_member(review, "request");
  if (request == nullptr || !request->is_object()) return Error("request is missing");
  if (string_member(*request, "uid").empty()) return Error("request.uid is missing");
  const std::string_view operation_text = string_member(*request, "operation");
  if (operation_text.empty()) return Error("request.operation is missing");
  const std::optional<Operation> operation = parse_operation(operation_text);
  const Json* object = find_member(*request, "object");
  if (object != nullptr && !object->is_object() && !object->is_null()) {
    return Error("request.object must be an object");
  }
  if (operation && (*operation == Operation::kCreate || *operation == Operation::kUpdate) &&
      (object == nullptr || !object->is_object())) {
    return Error("request.object is missing (required for " + std::string(operation_text) + ")");
  }
  return request;
}

// What the outcome says of a valid request: its uid, operation, kind and name (the object's when
// the request names none), and its namespace (the object's, else "default").
AdmissionOutcome describe_request(const Json& request, const Json* object) {
  AdmissionOutcome outcome;
  outcome.uid = std::string(string_member(request, "uid"));
  outcome.operation = std::string(string_member(request, "operation"));
  outcome.name = std::string(string_member(request, "name"));
  if (const Json* kind = find_member(request, "kind"))
    outcome.kind = std::string(string_member(*kind, "kind"));
  std::string ns(string_member(request, "namespace"));
  if (ns.empty() && object != nullptr) {
    if (const Json* metadata = find_member(*object, "metadata"))
      ns = std::string(string_member(*metadata, "namespace"));
  }
  if (ns.empty()) ns = "default";
  outcome.ns = ns;
  if (outcome.name.empty() && object != nullptr) outcome.name = object_name(*object);
  return outcome;
}

// The response to an evaluated request: allowed or denied (403, with the rules' messages), the
// patch, the warnings and the audit annotations.
Json evaluated_response(const AdmissionOutcome& outcome, Endpoint endpoint) {
  const Evaluation& e = outcome.evaluation;
  Json review_out = response_envelope(outcome.uid, e.allowed);
  Json& response = review_out["response"];
  if (e.allowed && e.changed()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = base64_encode(e.patch_text);
  }
  if (std::vector<std::string> warnings = e.warnings(); !warnings.empty()) {
    response["warnings"] = warnings;
  }
  if (!e.allowed) {
    Json status = empty_object();
    status["code"] = 403;
    status["reason"] = "Forbidden";
    status["message"] = "gpuadmit denied " + outcome.kind + " " + outcome.ns + "/" + outcome.name +
                        ": " + e.deny_message();
    response["status"] = std::move(status);
  }
  // The API server prefixes each key with the webhook's name ("mutate.gpuadmit.io/class"), and
  // rejects keys that already hold a "/" (apiserver admission checkKeyFormat), so the keys are
  // bare. A denied object is not patched: its audit record names no mutations, which never
  // happened.
  const bool mutated = e.allowed && e.changed() && !e.mutations.empty();
  // Audit mode (docs/rollout.md): the rules that would have denied, on either endpoint.
  const std::vector<std::string> audited = e.audited_rules();
  if ((endpoint == Endpoint::kMutate && (!e.classes.empty() || mutated)) || !audited.empty()) {
    Json audit = empty_object();
    if (endpoint == Endpoint::kMutate && !e.classes.empty()) audit["class"] = join(e.classes, ",");
    if (endpoint == Endpoint::kMutate && mutated) audit["mutations"] = join(e.mutations, ",");
    if (!audited.empty()) audit["audit"] = join(audited, ",");
    response["auditAnnotations"] = std::move(audit);
  }
  return review_out;
}

// `owned` is `review` itself when the caller gives it up (its object is then evaluated in
// place), else nullptr.
AdmissionResult answer_review(const Json& review, Json* owned, Endpoint endpoint,
                              const Pipeline& pipeline, const CompiledPolicy& policy,
                              const ClusterFacts& cluster) {
  Expected<const Json*> checked = review_request(review);
  if (!checked) return fail(std::move(checked).error());
  const Json& request = **checked;
  const std::optional<Operation> operation = parse_operation(string_member(request, "operation"));
  const Json* object = find_member(request, "object");
  AdmissionResult r;
  r.outcome = describe_request(request, object);
  AdmissionOutcome& outcome = *r.outcome;

  const Scope scope = scope_of(request, operation, object);
  if (scope == Scope::kNone) {
    outcome.response = response_envelope(outcome.uid, true);
    return r;
  }

  EvaluateOptions options;
  options.ns = outcome.ns;
  options.operation = *operation;
  options.patch_as_text = true;    // the response carries the patch as text, nothing else reads it
  options.copy_unchanged = false;  // nor the mutated object
  options.claims = cluster.claims;
  // Who submits the object (k8s.io/api/admission/v1 AdmissionRequest.UserInfo, an
  // authentication/v1 UserInfo): the scheduler's DRA claims are recognised by it (engine/dra.h).
  if (const Json* user = find_member(request, "userInfo")) {
    options.username = std::string(string_member(*user, "username"));
  }
  set_scope_options(scope, request, *object, endpoint, cluster.templates, options);
  options.priority_classes = cluster.priority_classes;
  options.nodes = cluster.nodes;
  if (owned != nullptr) {
    Json& writable = *find_member(*find_member(*owned, "request"), "object");  // == *object
    outcome.evaluation = pipeline.evaluate_in_place(writable, options, policy);
  } else {
    outcome.evaluation = pipeline.evaluate(*object, options, policy);
  }
  outcome.evaluated = true;
  outcome.response = evaluated_response(outcome, endpoint);
  return r;
}

}  // namespace

std::string encode_response(const AdmissionOutcome& outcome) {
  return dump_json(outcome.response, Json::error_handler_t::replace);
}

namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Every 12 bits' two characters: three bytes are two lookups (8 KiB, in L1 for a review).
struct Base64Pairs {
  char pair[4096][2];
};
constexpr Base64Pairs make_base64_pairs() {
  Base64Pairs t{};
  for (int i = 0; i < 4096; ++i) {
    t.pair[i][0] = kBase64Alphabet[i >> 6];
    t.pair[i][1] = kBase64Alphabet[i & 63];
  }
  return t;
}
constexpr Base64Pairs kBase64Pairs = make_base64_pairs();

}  // namespace

std::string base64_encode(std::string_view bytes) {
  // Sized once and written by index: appending a character at a time cost ~20 instructions a
  // byte of the patch.
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3, o += 4) {
    const uint32_t n = (uint32_t(in[i]) << 16) | (uint32_t(in[i + 1]) << 8) | uint32_t(in[i + 2]);
    std::memcpy(o, kBase64Pairs.pair[n >> 12], 2);
    std::memcpy(o + 2, kBase64Pairs.pair[n & 0xfff], 2);
  }
  if (i + 1 == bytes.size()) {
    const uint32_t n = uint32_t(in[i]) << 16;
    *o++ = kBase64Alphabet[(n >> 18) & 63];
    *o++ = kBase64Alphabet[(n >> 12) & 63];  // then "==", already there
  } else if (i + 2 == bytes.size()) {
    const uint32_t n = (uint32_t(in[i]) << 16) | (uint32_t(in[i + 1]) << 8);
    *o++ = kBase64Alphabet[(n >> 18) & 63];
    *o++ = kBase64Alphabet[(n >> 12) & 63];
    *o++ = kBase64Alphabet[(n >> 6) & 63];  // then "=", already there
  }
  return out;
}

}  // namespace gpuadmit
