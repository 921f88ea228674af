#pragma once
// The native policies' fast path for Pods that have nothing to do with GPUs (docs/native.md,
// "The fast path"). Most Pods a cluster creates ask for no GPU and name nothing of a GPU pool,
// yet every Pod reaches the policies, and the full model (render/native_model.h) costs
// milliseconds per admission. A matchCondition sees only `object` and `request`, before any
// variable is evaluated (k8s.io/api admissionregistration/v1 MatchCondition), so a Pod it
// excludes costs one expression.
//
// plain_pod is that expression: true only for a Pod no rule and no mutation but gpu-visibility
// reads anything of — checked against every field a native rule or mutation reads of a
// non-GPU pod, conservatively (a field it does not know how to judge makes the Pod not plain):
//   - no container asks for a resource other than cpu, memory, ephemeral-storage and
//     hugepages-* (so no GPU resource, however the policy names it) or names a DRA claim, and
//     none has spec.resources, spec.overhead of another resource or spec.resourceClaims;
//   - no container sets NVIDIA_VISIBLE_DEVICES to anything but exactly "void" (what
//     gpu-visibility writes: GPU024 passes it), reads envFrom, mounts a path under the toolkit's
//     device-list root, or is privileged (GPU026);
//   - no runtimeClassName (GPU024); no toleration that could tolerate a class taint (an empty
//     key, or a class taint's key: GPU009, GPU026, strip-gpu-pool); no nodeSelector key of a
//     class label; no node affinity (GPU009);
//   - no gpuadmit.io/ or cdi.k8s.io/ annotation, no gpuadmit.io/ label (the workload settings,
//     GPU004, GPU024's CDI devices);
//   - not in a namespace of the policy's node agents (their rules and exemptions).
// Everything else (workloads with templates, DRA claims) is never plain: the full policies
// judge it. tests/native's differential sends plain and almost-plain Pods through both paths.

#include <optional>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

// CEL over `object` and `request` (a matchCondition): the object is a plain Pod.
std::string plain_pod(const CompiledPolicy& policy);

// The one mutation a plain Pod gets (gpu-visibility, with `enforcement.gpuVisibility: fix`):
// NVIDIA_VISIBLE_DEVICES=void appended to each container's env that does not name it, as JSON
// Patch adds — for the policy `gpuadmit-mutate-non-gpu-pods`, whose variables are the tenant's
// (render/native_tenants.h: a tenant with `mutate: false` gets nothing). nullopt when
// gpu-visibility does not mutate.
std::optional<Json> plain_pod_mutation(const CompiledPolicy& policy);

}  // namespace gpuadmit::render::native
