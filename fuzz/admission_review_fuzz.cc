// An AdmissionReview body, any bytes, through the whole pipeline as the webhook runs it (both
// endpoints, the embedded default policy): an answer or an error, never a crash, a hang or a
// leak; and an answer is an AdmissionReview for the request's uid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/admission.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"

namespace {

struct Setup {
  gpuadmit::Pipeline pipeline{gpuadmit::default_mutators(), gpuadmit::default_rules()};
  gpuadmit::PolicyPtr policy = gpuadmit::load_compiled_policy("").policy;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Setup setup;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (const auto endpoint : {gpuadmit::Endpoint::kMutate, gpuadmit::Endpoint::kValidate}) {
    const gpuadmit::AdmissionResult r =
        gpuadmit::handle_admission_review_text(body, endpoint, setup.pipeline, *setup.policy);
    if (r.error.has_value() == r.outcome.has_value()) std::abort();
    if (r.outcome) {
      const gpuadmit::Json& response = r.outcome->response;
      if (!response.is_object() || response.value("kind", "") != "AdmissionReview") std::abort();
      if (response["response"].value("uid", "") != r.outcome->uid) std::abort();
    }
  }
  return 0;
}
