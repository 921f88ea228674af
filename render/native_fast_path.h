#pragma once
// The native policies' fast path for objects that have nothing to do with GPUs (docs/native.md,
// "The fast path"). Most Pods a cluster creates ask for no GPU and name nothing of a GPU pool,
// and so do most Deployments, their ReplicaSets, Jobs and CronJobs; yet every one reaches the
// policies, and the full model (render/native_model.h) costs milliseconds per admission. A
// matchCondition sees only `object`, `oldObject` and `request`, before any variable is evaluated
// (k8s.io/api admissionregistration/v1 MatchCondition), so an object it excludes costs one
// expression.
//
// plain_object is that expression: true only for a Pod, or a built-in workload with one pod
// template (apps Deployment, ReplicaSet, StatefulSet, DaemonSet; batch Job, CronJob: the workload
// table's paths), that no rule and no mutation but gpu-visibility reads anything of — checked
// against every field a native rule or mutation reads of a non-GPU pod spec, conservatively (a
// field in a shape it does not expect makes the object not plain):
//   - no container asks for a resource other than cpu, memory, ephemeral-storage and
//     hugepages-* (so no GPU resource, however the policy names it) or names a DRA claim, and
//     the pod spec has no resources, no overhead of another resource, no resourceClaims;
//   - no container sets NVIDIA_VISIBLE_DEVICES to anything but exactly "void" (what
//     gpu-visibility writes: GPU024 passes it), reads envFrom, mounts a path under the toolkit's
//     device-list root, or is privileged (GPU026); no hostPath volume (GPU024's device nodes);
//   - no runtimeClassName (GPU024); no toleration that could tolerate a class taint (an empty
//     key, or a class taint's key: GPU009, GPU026, strip-gpu-pool); no nodeSelector key of a
//     class label; no node affinity (GPU009);
//   - no gpuadmit.io/ or cdi.k8s.io/ annotation, no gpuadmit.io/ label, on the object or any
//     metadata on the way to its template (the workload settings, GPU004, GPU024's CDI devices);
//   - not in a namespace of the policy's node agents (their rules and exemptions).
// Every other kind (JobSet, the operators', the policy's workloads, DRA claims) is never plain.
// tests/native's differential and the tenant-attack cases 500-517 send objects on both sides of
// the line through the webhook and the native policies.

#include <optional>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

// CEL over `object` and `request` (a matchCondition): the object is plain.
std::string plain_object(const CompiledPolicy& policy);

// The one mutation a plain object gets (gpu-visibility, with `enforcement.gpuVisibility: fix`):
// NVIDIA_VISIBLE_DEVICES=void appended to each container's env that does not name it, as JSON
// Patch adds — for the policy `gpuadmit-mutate-non-gpu-pods`, whose variables are the tenant's
// (render/native_tenants.h: a tenant with `mutate: false` gets nothing). nullopt when
// gpu-visibility does not mutate.
std::optional<Json> plain_object_mutation(const CompiledPolicy& policy);

// CEL (a matchCondition): the object is one the webhook mutates now (docs/decisions.md,
// "Controllers converge"): a Pod; a workload without a controller, on CREATE, or on an UPDATE
// that changed its template (never a Job's: immutable).
std::string mutated_now();

// That policy's resourceRules: Pods on CREATE, the template kinds on CREATE and UPDATE (Jobs on
// CREATE).
Json plain_object_rules();

}  // namespace gpuadmit::render::native
