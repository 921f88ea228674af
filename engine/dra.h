#pragma once
// Dynamic Resource Allocation as gpuadmit counts it (docs/dra.md): the device requests of a
// ResourceClaimSpec in every served shape, what a pod's claims ask for once resolved
// (engine/claim_resolver.h), and how many GPU units that is per container and per pod.
//
//   for (const DraRequest& r : claim_requests(spec, "spec.devices")) r.device_class ...
//   PodDra dra = resolve_pod_claims(pod, policy, options.claims, ns);
//   dra.container_units[i];  dra.container_claims[i];  dra.pod_units;  dra.any_unresolved;

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/claim_resolver.h"
#include "engine/json.h"
#include "engine/pod_view.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

inline constexpr std::string_view kResourceApiGroup = "resource.k8s.io";
// The DRA objects gpuadmit judges on CREATE (issue 13), in every version of the group: they
// carry no pod spec, so the workload table (engine/workload_kinds.h) does not name them.
inline constexpr std::string_view kClaimKinds[] = {"ResourceClaim", "ResourceClaimTemplate"};
inline constexpr std::string_view kAllocationModeAll = "All";
// The most devices one allocation holds (k8s.io/api/resource/v1 AllocationResultsMaxSize): the
// worst case the quota admission plugin charges for `allocationMode: All` (KEP-4381,
// "ResourceQuota"), and what gpuadmit counts for it when the class has no gpusPerNode.
inline constexpr int64_t kAllocationResultsMaxSize = 32;
// The scheduler's claim for a pod whose extended resource a DeviceClass maps
// (`extendedResourceName`, KEP-5004): the pod was counted on the extended-resource path.
inline constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
// The user kube-scheduler authenticates as (k8s.io/apiserver/pkg/authentication/user
// KubeScheduler; kubeadm's scheduler.conf client certificate, CN=system:kube-scheduler).
inline constexpr std::string_view kSchedulerUser = "system:kube-scheduler";

// True for ResourceClaim / ResourceClaimTemplate of resource.k8s.io (any version).
bool is_claim_object(std::string_view api_version, std::string_view kind);

// True when a claim object under admission is the one kube-scheduler makes for a pod's extended
// resources backed by DRA (KEP-5004), and only then may its annotation be honoured (docs/dra.md,
// "The scheduler's claims"). The scheduler's dynamicresources plugin builds it in
// preFilterExtendedResources and creates it in createExtendedResourceClaimInAPI
// (pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go) with its own
// client, so the API server reports the scheduler as its creator. All of:
//  - kind ResourceClaim: the scheduler makes no ResourceClaimTemplate;
//  - `username` (AdmissionRequest.userInfo.username) is kSchedulerUser: the one part a tenant
//    cannot write — the annotation, ownerReferences and generateName are all its to set;
//  - the annotation is "true" and exactly one ownerReference, {apiVersion: v1, kind: Pod,
//    controller: true} with a name: what the scheduler itself looks its claim up by
//    (findExtendedResourceClaim: the annotation and a controller reference to the pod).
// Anything else — a tenant's copy of that shape, lint (no request), a template — is a claim
// like any other, checked by every claim rule.
bool is_scheduler_extended_resource_claim(const Json& object, std::string_view kind,
                                          std::string_view username);

// The ResourceClaimSpec of a claim object (a ResourceClaim's `spec`, a template's
// `spec.spec`) and its dotted path; nullptr when absent or not an object.
const Json* claim_spec_of(const Json& object, std::string_view kind, std::string* path);

// One device request, or one alternative of a `firstAvailable` request, in any served shape
// (k8s.io/api/resource/v1 types.go DeviceRequest{Name, Exactly *ExactDeviceRequest,
// FirstAvailable []DeviceSubRequest}; v1beta2 the same; v1beta1 DeviceRequest carries
// DeviceClassName, Selectors, AllocationMode, Count, AdminAccess itself, plus FirstAvailable).
struct DraRequest {
  std::string name;     // the request's name; "<request>/<subrequest>" for an alternative
  std::string request;  // the top-level request's name (what containers reference)
  std::string path;     // dotted: "spec.devices.requests[0].exactly"
  std::string device_class;
  bool all = false;  // allocationMode: All (every matching device on the node)
  // ExactCount's count; v1 types.go: "If AllocationMode is ExactCount and this field is not
  // specified, the default is one."
  int64_t count = 1;
  bool admin_access = false;
  bool alternative = false;  // one of a firstAvailable list (the scheduler picks the first fit)
  // MIG profiles the selectors' CEL pins literally: `...['gpu.nvidia.com'].profile == '1g.5gb'`
  // (NVIDIA k8s-dra-driver-gpu's device attribute), with the path of each selector.
  std::vector<std::pair<std::string, std::string>> mig_profiles;
};

// The requests of a ResourceClaimSpec (`spec_path` prefixes the paths), in written order.
// Entries that are not objects, or have no deviceClassName, are skipped (the API server rejects
// them; nothing to count).
std::vector<DraRequest> claim_requests(const Json& claim_spec, const std::string& spec_path);

// GPU units of one request under the policy: ceil(count / devicesPerGPU) of the class mapping its
// DeviceClass; `All` counts as the class's gpusPerNode (every GPU of one node), or as
// kAllocationResultsMaxSize devices when unset (never 0: All is unbounded but by that); 0 for a
// DeviceClass the policy does not map.
int64_t request_gpu_units(const DraRequest& r, const CompiledPolicy& policy);

// GPU units of a whole claim: its requests added up, a firstAvailable list counted as its
// largest alternative (any may be allocated).
int64_t claim_gpu_units(const std::vector<DraRequest>& requests, const CompiledPolicy& policy);

// One entry of the pod's spec.resourceClaims, resolved.
struct PodClaim {
  std::string name;  // the pod's name for the claim (what containers reference)
  ClaimKind kind = ClaimKind::kClaim;
  std::string reference;  // the ResourceClaim or ResourceClaimTemplate name
  std::string path;       // "spec.resourceClaims[0]"
  ClaimLookup status = ClaimLookup::kUnavailable;
  std::string error;  // kNotFound / kUnavailable: why
  std::vector<DraRequest> requests;
  int64_t units = 0;                    // claim_gpu_units
  const GpuClass* gpu_class = nullptr;  // the class of its first GPU request
  std::string device_class;             // that request's DeviceClass
};

// One container's use of a claim (its resources.claims entry): the whole claim, or one request.
struct ClaimUse {
  size_t claim = 0;     // index in PodDra::claims
  std::string request;  // "" for the whole claim
  int64_t units = 0;
  std::string device_class;  // of its first GPU request
};

// What the pod spec's claims ask for.
struct PodDra {
  std::vector<PodClaim> claims;
  // Parallel to pod.containers(): GPU units each can use; empty when the pod has no claims.
  std::vector<int64_t> container_units;
  // Parallel to pod.containers(): the claims each uses with GPU units, in written order.
  std::vector<std::vector<ClaimUse>> container_claims;
  // Parallel to pod.containers(): it uses a claim whose content is not known (not resolved, or
  // a name the pod does not declare), which may hold GPUs.
  std::vector<bool> container_unknown;
  int64_t pod_units = 0;        // Σ claims once each (claims are allocated per pod)
  bool any_gpu = false;         // a resolved claim asks for a mapped DeviceClass
  bool any_unresolved = false;  // a claim whose content is not known
  const PodClaim* first_gpu_claim() const;
  bool empty() const { return claims.empty(); }
};

// Resolves every spec.resourceClaims entry through `resolver` (null: none is resolvable) in
// namespace `ns`, and counts GPU units per container (the claims and requests its
// resources.claims names, each once; a claim two containers share counts for each of them) and
// per pod (each entry once, as the scheduler allocates a claim once per pod and a template
// becomes one claim per pod: kueue's and NVIDIA's MPS samples share one claim between
// containers). An unresolved claim counts 0 here: GPU023 denies the Pod instead.
PodDra resolve_pod_claims(const PodView& pod, const CompiledPolicy& policy,
                          const ClaimResolver* resolver, std::string_view ns);

// True when the pod spec tolerates a GPU pool's taint or requires one of its labels (what GPU009
// reports for a non-GPU pod): a pod with unresolved claims that does so is taken for a GPU pod.
bool targets_gpu_pool(const Json& spec, const CompiledPolicy& policy);

// Whether `pod` (a Pod object, as an item of a PodList) waits for the ResourceClaim (kClaim:
// `resourceClaimName`) or ResourceClaimTemplate (kTemplate: `resourceClaimTemplateName`) named
// `name`: not scheduled, not being deleted, naming it (ClaimResolver::pending_pods_naming) — a
// claim also by the name status.resourceClaimStatuses records for one made from a template.
bool pod_waits_for_claim(const Json& pod, ClaimKind kind, std::string_view name);

}  // namespace gpuadmit
