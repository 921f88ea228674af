#pragma once
// GPU resource accounting over containers and pods, as the scheduler counts it.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "engine/pod_view.h"
#include "engine/quantity.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

// The quantity of `resource` under container.resources.<section> ("requests" | "limits"), or
// nullopt when absent or unparsable. Accepts JSON strings and numbers, as the API server does.
std::optional<Quantity> container_quantity(const Json& container, std::string_view section,
                                           std::string_view resource);

// Parses a JSON quantity value (string or number).
std::optional<Quantity> parse_json_quantity(const Json& value);

// One GPU resource a container names, with its request and limit as written.
struct GpuResourceUse {
  std::string resource;
  std::optional<Quantity> request;
  std::optional<Quantity> limit;
  // The amount the scheduler uses: the request, else the limit (the API server defaults an
  // extended resource's request to its limit).
  std::optional<Quantity> effective() const { return request ? request : limit; }
};

// The GPU resources of a container in the order they appear (requests first, then limits-only).
std::vector<GpuResourceUse> gpu_resources_of(const Json& container, const CompiledPolicy& policy);

// One GPU resource a container names, with the raw JSON values (nullptr when absent or null, so
// that absent and unparsable stay distinct) and their parsed quantities.
struct ContainerGpuResource {
  std::string resource;
  const Json* request = nullptr;
  const Json* limit = nullptr;
  std::optional<Quantity> request_quantity;  // nullopt: absent, null or unparsable
  std::optional<Quantity> limit_quantity;
  // The value the scheduler uses: the request when written, else the limit.
  const Json* effective() const { return request != nullptr ? request : limit; }
  const std::optional<Quantity>& effective_quantity() const {
    return request != nullptr ? request_quantity : limit_quantity;
  }
};

// Appends the GPU resources of a container (requests first, then limits-only, in written order;
// null values skipped) to `out`.
void container_gpu_resources(const Json& container, const CompiledPolicy& policy,
                             std::vector<ContainerGpuResource>& out);

// The GPU resources of every container of a pod spec, read and parsed once so that the rules
// share them instead of each re-reading the containers. The entries point into the pod's JSON:
// valid while the object is not changed (the pipeline builds it after the mutators).
//
//   PodGpuResources gpu(pod, policy);
//   for (const ContainerGpuResource& r : gpu.of(i)) ...  // i: index in pod.containers()
class PodGpuResources {
 public:
  PodGpuResources(const PodView& pod, const CompiledPolicy& policy);
  size_t size() const { return ends_.size(); }  // == pod.containers().size()
  std::span<const ContainerGpuResource> of(size_t container) const {
    const size_t begin = container == 0 ? 0 : ends_[container - 1];
    return {resources_.data() + begin, ends_[container] - begin};
  }
  // container_gpu_units of that container.
  int64_t units(size_t container) const;
  // is_gpu_pod: some container asks for a positive quantity of a GPU resource.
  bool any_positive() const;

 private:
  std::vector<ContainerGpuResource> resources_;
  std::vector<size_t> ends_;  // per container: one past its last entry in resources_
};

// GPU units a container asks for (sum over its GPU resources of the effective amount, rounded up
// to whole units; 0 when none is positive).
int64_t container_gpu_units(const Json& container, const CompiledPolicy& policy);

// True when the container asks for GPUs: a positive request or limit of a GPU resource (SPEC §2:
// "0" is not a GPU request). The one place that decides it for a container — is_gpu_pod, the
// gpu-visibility mutation and GPU024 ask it — so that GPUs a container gets another way (DRA:
// its resources.claims naming a GPU claim of the pod) plug in here.
bool container_requests_gpu(const PodView& pod, const ContainerRef& ref,
                            const CompiledPolicy& policy);

// True when the container may get GPUs: it requests them (container_requests_gpu) or it uses
// any of the pod's DRA claims (`resources.claims` not empty). At admission a claim's content may
// be unknown (the webhook's lookup is off by default), so a claim-using container is never made
// blind to GPUs nor denied for reaching them: the gpu-visibility mutation and GPU024 ask this.
bool container_may_get_gpus(const PodView& pod, const ContainerRef& ref,
                            const CompiledPolicy& policy);

// True when a container, init container or ephemeral container requests or limits a positive
// quantity of a GPU resource (SPEC §2: "0" is not a GPU request).
bool is_gpu_pod(const PodView& pod, const CompiledPolicy& policy);

// The pod's effective GPU request, as the scheduler computes it (k8s.io/component-helpers
// resource.PodRequests), per GPU resource: max(sum of app containers + restartable init
// sidecars, max over init containers of (its request + sidecars started before it)); the
// resources' results are then added up.
int64_t effective_pod_gpus(const PodView& pod, const CompiledPolicy& policy);

// One GPU resource of a pod with its effective pod-level amount in whole units.
struct PodGpuRequest {
  std::string resource;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...
  int64_t units = 0;
};
// effective_pod_gpus per GPU resource, in first-named order (resources whose amount is 0
// included): what `gpuadmit fleet` packs, read from the mutated pod.
std::vector<PodGpuRequest> effective_pod_gpu_requests(const PodView& pod,
                                                      const CompiledPolicy& policy);

}  // namespace gpuadmit
