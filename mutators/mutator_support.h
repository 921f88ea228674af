#pragma once
// Helpers shared by the mutators of mutators/ (engine/json.h member_object and member_array find
// or create JSON members without ever throwing): the MIG profile check every MIG-aware mutation
// applies, and the guard that turns a mutation body into an explicit MutationOutcome.
//
//   MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
//     return guarded([&] { if (!mig_profile_valid(ctx)) return false; ... });
//   }

#include <exception>
#include <string>
#include <string_view>
#include <type_traits>

#include "engine/context.h"
#include "engine/json.h"
#include "engine/mutator.h"

namespace gpuadmit::mutator_support {

inline constexpr std::string_view kWholeGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kSharedGpuResource = "nvidia.com/gpu.shared";

// A member that is present and not null ("key: null" counts as absent, as it does for the
// rules' reading of requests and limits).
const Json* present(const Json& object, std::string_view key);

// True when the pod's MIG profile can be honoured by its class: no profile, or a class with
// `mig` listing the profile. Anything else is GPU007, which no mutation tries to repair.
bool mig_profile_valid(const PodContext& ctx);

// The resource name of a MIG profile under strategy mixed: nvidia.com/mig-<profile>, with the
// "+me" suffix written ".me" (k8s-device-plugin nvml-mig-device.go GetName replaces "+" by ".").
std::string mig_resource_name(std::string_view profile);

// The outcome of an exception caught in a mutation: "internal error: <what>". Never throws (a
// reason that cannot be allocated is left empty).
MutationOutcome failure_from_exception(const char* what) noexcept;

// Records the policy field a mutation applies (`--explain`), e.g.
// because(ctx, "spec.classes.h100.taints[1]"); each path once per mutator call.
void because(PodContext& ctx, std::string path);

// Runs a mutation body and makes its outcome explicit. The body returns a MutationOutcome, or a
// bool (true: applied, false: not applicable). An exception (which validated input should never
// raise) cannot escape into the pipeline: it is the mutation's failure, with its text as the
// reason, and the pipeline then keeps none of the object's edits (engine/mutator.h).
template <typename F>
MutationOutcome guarded(F&& body) noexcept {
  try {
    if constexpr (std::is_same_v<std::invoke_result_t<F&>, bool>) {
      return MutationOutcome::changed_if(body());
    } else {
      return body();
    }
  } catch (const std::exception& e) {
    return failure_from_exception(e.what());
  } catch (...) {
    return failure_from_exception(nullptr);
  }
}

}  // namespace gpuadmit::mutator_support
