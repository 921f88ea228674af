#pragma once
// Helpers shared by the mutators of mutators/ (engine/json.h member_object and member_array find
// or create JSON members without ever throwing): the MIG profile check every MIG-aware mutation
// applies, and the guard that keeps an unexpected exception from escaping a mutator.
//
//   if (!mig_profile_valid(ctx)) return false;

#include <exception>
#include <string>
#include <string_view>

#include "engine/context.h"
#include "engine/json.h"

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

// Records the policy field a mutation applies (`--explain`), e.g.
// because(ctx, "spec.classes.h100.taints[1]"); each path once per mutator call.
void because(PodContext& ctx, std::string path);

// Runs a mutation body; an exception (which validated input should never raise) is swallowed so
// that it cannot escape into the pipeline: whatever was edited so far stays (the diff at the end
// still describes it exactly) and the mutation is not listed as applied.
template <typename F>
bool guarded(F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception&) {
    return false;
  } catch (...) {
    return false;
  }
}

}  // namespace gpuadmit::mutator_support
