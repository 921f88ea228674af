#pragma once
// Helpers shared by the rules of rules/: how a container and a resource are named in messages
// and paths, the GPU resources a container writes (raw JSON, so that absent and unparsable stay
// distinct), the kind of a GPU resource, and the pod's effective GPU count with its contributors.
//
//   container_label(ref)                      // "init container setup"
//   resource_path(ref, "limits", "nvidia.com/gpu")
//       // spec.containers[0].resources.limits["nvidia.com/gpu"]

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/context.h"
#include "engine/join.h"  // join(items): "a, b, c" in messages
#include "engine/json.h"
#include "engine/pod_view.h"
#include "engine/quantity.h"
#include "engine/resources.h"
#include "policies/compiled_policy.h"
#include "policies/model.h"

namespace gpuadmit::rule_support {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kSharedGpuResource = "nvidia.com/gpu.shared";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";
inline constexpr std::string_view kClassKey = "gpuadmit.io/class";
inline constexpr std::string_view kMigProfileKey = "gpuadmit.io/mig-profile";

// "container trainer", "init container setup", "ephemeral container debugger"; a container
// without a name is named by its path ("container spec.containers[1]").
std::string container_label(const ContainerRef& ref);

// spec.containers[0].resources.<section>["<resource>"]
std::string resource_path(const ContainerRef& ref, std::string_view section,
                          std::string_view resource);

// A quantity as the user wrote it: the string, or the JSON number.
std::string written(const Json& value);

// The value as JSON text ("\"abc\"", 1.5); invalid UTF-8 is replaced, never thrown on.
std::string json_text(const Json& value);

// The pod's GPU resources: the pipeline's (read once per pod spec, shared by the rules), else
// read here (a rule checked on its own, as in the rule tests).
//
//   const GpuResources gpu(pod, ctx);
//   for (const ContainerGpuResource& r : gpu->of(i)) ...  // i: index in pod.containers()
class GpuResources {
 public:
  GpuResources(const PodView& pod, const PodContext& ctx)
      : gpu_(ctx.gpu_resources != nullptr ? ctx.gpu_resources : &own_.emplace(pod, *ctx.policy)) {}
  GpuResources(const GpuResources&) = delete;
  GpuResources& operator=(const GpuResources&) = delete;
  const PodGpuResources& operator*() const { return *gpu_; }
  const PodGpuResources* operator->() const { return gpu_; }

 private:
  std::optional<PodGpuResources> own_;
  const PodGpuResources* gpu_;
};

// Calls each(ref, resource) for every GPU resource of every container, in pod-spec order.
template <typename F>
void for_each_gpu_resource(const PodView& pod, const PodGpuResources& gpu, F each) {
  const std::vector<ContainerRef>& containers = pod.containers();
  for (size_t i = 0; i < containers.size(); ++i) {
    for (const ContainerGpuResource& r : gpu.of(i)) each(containers[i], r);
  }
}

// The parsed quantity of a raw value; nullopt when absent or unparsable.
std::optional<Quantity> parse_raw(const Json* value);

// True when the value parses to a quantity > 0 (SPEC §2: "0" is not a GPU request).
bool is_positive(const Json* value);
bool is_positive(const std::optional<Quantity>& q);

// Whole GPUs, shared (time-sliced) GPUs, or MIG slices.
enum class GpuKind { kWhole, kShared, kMig };
GpuKind gpu_kind(std::string_view resource);
std::string_view gpu_kind_name(GpuKind kind);  // "whole GPUs", "shared GPUs", "MIG slices"

// The MIG profile a resource names: "nvidia.com/mig-1g.10gb.me" → "1g.10gb+me" (the device
// plugin writes the +me suffix as .me); nullopt for a non-MIG resource.
std::optional<std::string> mig_profile_of_resource(std::string_view resource);

// The resource that asks for a MIG profile: "1g.10gb+me" → "nvidia.com/mig-1g.10gb.me".
std::string mig_resource_name(std::string_view profile);

// Whether `list` holds `value` (a class's MIG profiles, a pool's taint keys).
bool contains(const std::vector<std::string>& list, std::string_view value);

// The number of compute slices of a MIG profile ("3g.40gb" → 3); nullopt when malformed.
std::optional<int64_t> mig_compute_slices(std::string_view profile);

// The dotted path of a workload setting (SPEC §2), where it was found: the pod (template)
// annotation, its label, the object's annotation or label; the pod annotation when absent.
std::string setting_path(const PodView& pod, std::string_view key);

// The pod's effective GPU count (engine/resources.h pod_requests, Kubernetes' PodRequests) and
// the containers that make it up, for messages: "container a: 4, container b: 2" ("pod
// overhead: 1" for spec.overhead). `counts(resource)`, when given, limits the count to the GPU
// resources it accepts (e.g. whole GPUs).
struct PodGpuCount {
  int64_t total = 0;
  std::string breakdown;
};
PodGpuCount pod_gpu_count(const PodView& pod, const PodGpuResources& gpu,
                          const std::function<bool(std::string_view)>& counts = nullptr);

// pod_gpu_count(...).total without the breakdown (engine/resources.h pod_requests_total): rules
// build the message only when they report.
inline int64_t pod_gpu_total(const PodView& pod, const PodGpuResources& gpu,
                             const std::function<bool(std::string_view)>& counts = nullptr) {
  return pod_requests_total(pod, gpu, counts);
}

// GPU units a container gets through DRA claims (engine/dra.h); 0 without resolved claims.
int64_t claim_units(const PodContext& ctx, size_t container);
// The pod's DRA GPU units (each claim once).
int64_t pod_claim_units(const PodContext& ctx);
// `count` with the pod's DRA claims added: total and breakdown ("claim gpu (gpu.nvidia.com): 1").
PodGpuCount with_claims(PodGpuCount count, const PodContext& ctx);
// The DRA claims a container uses with GPU units, for messages: "claim a (gpu.nvidia.com): 4,
// claim shared request g (gpu.nvidia.com): 2"; "" without any.
std::string container_claims_text(const PodContext& ctx, size_t container);

}  // namespace gpuadmit::rule_support
