#pragma once
// AdmissionReview admission.k8s.io/v1 codec (SPEC §7.1): request in, response review out.
// Pure JSON: the webhook and `gpuadmit review` both call handle_admission_review.

#include <optional>
#include <string>
#include <string_view>

#include "engine/controllers.h"
#include "engine/json.h"
#include "engine/pipeline.h"

namespace gpuadmit {

enum class Endpoint { kMutate, kValidate };

// A review nesting deeper than this is refused (SPEC §7.1): the engine's walks recurse.
inline constexpr int kMaxReviewDepth = 100;

// A review that cannot be answered (HTTP 400): not JSON, wrong apiVersion/kind, no request.uid,
// nesting too deep.
struct AdmissionError {
  std::string message;  // one line: "request.uid is missing"
};

struct AdmissionOutcome {
  Json response;  // the AdmissionReview to send back (apiVersion, kind, response)
  Evaluation evaluation;
  std::string uid, kind, ns, name, operation;
  bool evaluated = false;  // false when passed through untouched (DELETE, subresource, ...)
};

// Parses review text (at most 100 levels deep), validates it and answers it. The outcome's
// evaluation.mutated is left null (the response carries the patch).
// Exactly one of the two is set.
struct AdmissionResult {
  std::optional<AdmissionOutcome> outcome;
  std::optional<AdmissionError> error;
};
// `claims` resolves pods' DRA claim references (EvaluateOptions::claims: the webhook's optional
// API lookup, review's --claims files); null: none resolve. `templates`: whether workload
// templates are mutated or only judged (`serve --templates`, engine/controllers.h).
// `priority_classes` are the cluster's (EvaluateOptions::priority_classes: the webhook's
// optional watch); null: unknown. `nodes` likewise (EvaluateOptions::nodes: `serve
// --node-watch`, `review --nodes`).
AdmissionResult handle_admission_review_text(std::string_view body, Endpoint endpoint,
                                             const Pipeline& pipeline, const CompiledPolicy& policy,
                                             const ClaimResolver* claims = nullptr,
                                             TemplateMode templates = TemplateMode::kMutate,
                                             const PriorityClassSource* priority_classes = nullptr,
                                             const NodeSource* nodes = nullptr);
AdmissionResult handle_admission_review(const Json& review, Endpoint endpoint,
                                        const Pipeline& pipeline, const CompiledPolicy& policy,
                                        const ClaimResolver* claims = nullptr,
                                        TemplateMode templates = TemplateMode::kMutate,
                                        const PriorityClassSource* priority_classes = nullptr,
                                        const NodeSource* nodes = nullptr);

// The outcome's AdmissionReview response as text, as the webhook sends it (engine/json_dump.h;
// invalid UTF-8 in a message replaced, never thrown on).
std::string encode_response(const AdmissionOutcome& outcome);

// Standard base64 (RFC 4648, with padding), as AdmissionResponse.patch is []byte in JSON.
std::string base64_encode(std::string_view bytes);

}  // namespace gpuadmit
