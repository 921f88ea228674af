#pragma once
// `gpuadmit render` (SPEC §8): the cluster objects a policy implies: its PriorityClasses, a
// ResourceQuota per literal tenant namespace, and the two webhook configurations
// (render/webhook_configuration.h). No LimitRange: docs/install.md, "What render makes".
//
//   for (const Json& object : cluster_objects(policy, target)) emit(object);

#include <string_view>
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

// One v1 ResourceQuota per literal namespace of each tenant with `quota.gpus`:
// requests.<name> = quota.gpus for every name of tenant_gpu_resources().
std::vector<Json> resource_quotas(const CompiledPolicy& policy);

// True when a namespace pattern (RE2, full match) is a literal namespace name (a DNS label).
bool is_literal_namespace(std::string_view pattern);

// Everything, in apply order: PriorityClasses, ResourceQuotas, the mutating and the validating
// webhook configuration.
std::vector<Json> cluster_objects(const CompiledPolicy& policy, const WebhookTarget& target);

}  // namespace gpuadmit::render
