#pragma once
// `gpuadmit render` (SPEC §8): the cluster objects a policy implies: its PriorityClasses, a
// ResourceQuota per literal tenant namespace, and the two webhook configurations
// (render/webhook_configuration.h). No LimitRange: docs/install.md, "What render makes".
//
//   for (const Json& object : cluster_objects(policy, target)) emit(object);

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"
#include "render/webhook_configuration.h"

namespace gpuadmit::render {

// scheduling.k8s.io/v1 PriorityClass objects, in policy order.
std::vector<Json> priority_classes(const CompiledPolicy& policy);

// The resource names a tenant's GPUs are counted under: nvidia.com/gpu, and the MIG (strategy
// mixed) and shared (time-slicing renameByDefault) names of the classes it may use.
std::vector<std::string> tenant_gpu_resources(const CompiledPolicy& policy, const Tenant& tenant);

// The suffix of a ResourceQuota key counting a DRA DeviceClass's devices (k8s.io/api/core/v1
// ResourceClaimsPerClass; KEP-4381): `<DeviceClass>.deviceclass.resource.k8s.io/devices`.
inline constexpr std::string_view kDeviceClassQuotaSuffix = ".deviceclass.resource.k8s.io/devices";

// A tenant's DRA quota keys: for each DeviceClass that a class it may use maps,
// `<DeviceClass>.deviceclass.resource.k8s.io/devices` = quota.gpus × devicesPerGPU (devices, not
// GPUs: 7 devices of a devicesPerGPU 7 class are one GPU unit). Empty without quota.gpus; a
// DeviceClass whose key would be too long is left out (resource_quota_notes says so).
std::vector<std::pair<std::string, int64_t>> tenant_device_class_quota(const CompiledPolicy& policy,
                                                                       const Tenant& tenant);

// One v1 ResourceQuota per literal namespace of each tenant with `quota.gpus`:
// requests.<name> = quota.gpus for every name of tenant_gpu_resources(), and the
// tenant_device_class_quota() keys. Each key caps its own name: no ResourceQuota key sums across
// names (docs/install.md, "What render makes").
std::vector<Json> resource_quotas(const CompiledPolicy& policy);

// What resource_quotas() could not render, one sentence each, for `gpuadmit render` to print on
// standard error: a tenant with quota.gpus whose namespaces include a pattern (no namespace to put
// a ResourceQuota in), a DeviceClass whose quota key would be too long.
std::vector<std::string> resource_quota_notes(const CompiledPolicy& policy);

// True when a namespace pattern (RE2, full match) is a literal namespace name (a DNS label).
bool is_literal_namespace(std::string_view pattern);

// Everything, in apply order: PriorityClasses, ResourceQuotas, the mutating and the validating
// webhook configuration.
std::vector<Json> cluster_objects(const CompiledPolicy& policy, const WebhookTarget& target);

}  // namespace gpuadmit::render
