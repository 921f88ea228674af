#pragma once
// GPU resource accounting over containers and pods, as the scheduler counts it.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "engine/pod_view.h"
#include "engine/quantity.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

struct PodDra;  // engine/dra.h

// Parses a JSON quantity value (string or number), as the API server accepts both.
std::optional<Quantity> parse_json_quantity(const Json& value);

// One GPU resource a container names: the one reader of a container's GPU resources (the
// pipeline, the rules, the defaults mutation and the PodRequests walk all read through it). The
// raw JSON values (nullptr when absent or null, so that absent and unparsable stay distinct) and
// their parsed quantities.
struct ContainerGpuResource {
  std::string resource;
  const Json* request = nullptr;
  const Json* limit = nullptr;
  std::optional<Quantity> request_quantity;  // nullopt: absent, null or unparsable
  std::optional<Quantity> limit_quantity;
  // The value the scheduler uses, as written: the request when written, else the limit (the API
  // server defaults a missing extended-resource request to its limit, SetDefaults_Pod).
  const Json* effective() const { return request != nullptr ? request : limit; }
  const std::optional<Quantity>& effective_quantity() const {
    return request != nullptr ? request_quantity : limit_quantity;
  }
  // Whole units counted for it: the parsed request, else the parsed limit (an unparsable request
  // is GPU002's; counting its limit never counts less than the user asked for), rounded up
  // (Quantity::Value()); negative counts as 0.
  int64_t units() const;
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
  // The GPU resources of the pod's `spec.overhead` (RuntimeClass podFixed overhead, set on Pods
  // by the RuntimeClass admission plugin), as `request`s: PodRequests adds them to the pod.
  std::span<const ContainerGpuResource> overhead() const { return overhead_; }

 private:
  std::vector<ContainerGpuResource> resources_;
  std::vector<size_t> ends_;  // per container: one past its last entry in resources_
  std::vector<ContainerGpuResource> overhead_;
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

// True when pod.containers()[container] may get GPUs: it requests them (container_requests_gpu),
// or it uses a DRA claim (`resources.claims`) that may hold GPUs. With `dra` (the pod's claims,
// resolved: engine/dra.h), a claim may hold GPUs when its content is unknown or it asks for a
// DeviceClass the policy maps; without it, every claim may. So a container is never made blind
// to GPUs it could get, nor denied for reaching them — and one whose claims are known to be a
// NIC's is not taken for a GPU container (it gets NVIDIA_VISIBLE_DEVICES=void like any other:
// its CUDA image's own `all` would show it every GPU of the node). The gpu-visibility mutation,
// GPU024 and GPU026 ask this.
bool container_may_get_gpus(const PodView& pod, size_t container, const PodGpuResources& gpu,
                            const PodDra* dra);

// True when a container, init container or ephemeral container requests or limits a positive
// quantity of a GPU resource (SPEC §2: "0" is not a GPU request).
bool is_gpu_pod(const PodView& pod, const CompiledPolicy& policy);

// The effective pod request of each GPU resource, as Kubernetes computes it for scheduling
// and quota: k8s.io/component-helpers/resource/helpers.go PodRequests. The one walk of it
// (GPU005, GPU006, GPU013, GPU014, lint's namespace sums and `gpuadmit fleet` all use it):
//   per resource r (AggregateContainerRequests, the sidecar formula of KEP-753):
//     reqs[r]  = Σ app containers + Σ restartable init containers (sidecars)
//     init[r]  = max over the other init containers i of (i + sidecars declared before i)
//     result   = max(reqs[r], init[r])                  (maxResourceList: a tie keeps reqs)
//   pod-level `spec.resources` replaces only cpu, memory and hugepages-*
//     (IsSupportedPodLevelResource), so never a GPU resource: it is ignored here (GPU015);
//   `spec.overhead` is added (PodResourcesOptions.ExcludeOverhead is false for the scheduler's
//     NodeResourcesFit and for ResourceQuota).
// A container's amount is ContainerGpuResource::units(). Ephemeral containers declare no
// resources that count (the API forbids them).
struct PodResourceRequest {
  std::string_view resource;  // into the PodGpuResources walked
  int64_t units = 0;
  // With `with_parts`: the containers behind `units` and what each adds, in pod-spec order —
  // the app containers and sidecars, or the winning init container with the sidecars before it;
  // index SIZE_MAX is the pod overhead. Only positive amounts.
  std::vector<std::pair<size_t, int64_t>> parts;
};
inline constexpr size_t kPodOverheadPart = static_cast<size_t>(-1);

// In first-named order (resources whose amount is 0 included). `counts`, when given, limits the
// walk to the GPU resources it accepts (e.g. whole GPUs).
std::vector<PodResourceRequest> pod_requests(
    const PodView& pod, const PodGpuResources& gpu,
    const std::function<bool(std::string_view)>& counts = nullptr, bool with_parts = false);

// Σ pod_requests units (saturating): the pod's effective GPU request.
int64_t pod_requests_total(const PodView& pod, const PodGpuResources& gpu,
                           const std::function<bool(std::string_view)>& counts = nullptr);

// pod_requests of a pod spec read on the spot, for callers without a PodGpuResources.
int64_t effective_pod_gpus(const PodView& pod, const CompiledPolicy& policy);

// One GPU resource of a pod with its effective pod-level amount in whole units.
struct PodGpuRequest {
  std::string resource;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...
  int64_t units = 0;
};
// pod_requests with the names copied: what `gpuadmit fleet` packs, read from the mutated pod.
std::vector<PodGpuRequest> effective_pod_gpu_requests(const PodView& pod,
                                                      const CompiledPolicy& policy);

}  // namespace gpuadmit
