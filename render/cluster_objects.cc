#include "render/cluster_objects.h"

#include <algorithm>
#include <optional>
#include <string>

#include "engine/saturating.h"
#include "mutators/mutator_support.h"

namespace gpuadmit::render {
namespace {

using mutator_support::kSharedGpuResource;
using mutator_support::mig_resource_name;

constexpr std::string_view kManagedBy = "app.kubernetes.io/managed-by";

void add_unique(std::vector<std::string>& names, std::string name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
}

}  // namespace

bool is_literal_namespace(std::string_view pattern) {
  // RFC 1123 label, as Kubernetes requires of a namespace name: such a pattern has no RE2
  // metacharacter, so it full-matches only itself.
  if (pattern.empty() || pattern.size() > 63) return false;
  for (char c : pattern) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return pattern.front() != '-' && pattern.back() != '-';
}

std::vector<Json> priority_classes(const CompiledPolicy& policy) {
  std::vector<Json> out;
  for (const PriorityClassDecl& pc : policy.policy().priority_classes) {
    out.push_back(
        {{"apiVersion", "scheduling.k8s.io/v1"},
         {"kind", "PriorityClass"},
         {"metadata", {{"name", pc.name}, {"labels", {{kManagedBy, "gpuadmit"}}}}},
         {"value", pc.value},
         {"preemptionPolicy", pc.preemption_policy},
         {"globalDefault", pc.global_default},
         {"description", "GPU priority class of gpuadmit policy " + policy.policy().name}});
  }
  return out;
}

std::vector<std::string> tenant_gpu_resources(const CompiledPolicy& policy, const Tenant& tenant) {
  std::vector<std::string> names{"nvidia.com/gpu"};
  for (const GpuClass& c : policy.policy().classes) {
    if (tenant.allowed_classes &&
        std::find(tenant.allowed_classes->begin(), tenant.allowed_classes->end(), c.name) ==
            tenant.allowed_classes->end()) {
      continue;
    }
    if (c.mig && c.mig->strategy == MigConfig::Strategy::kMixed) {
      for (const std::string& profile : c.mig->profiles) {
        add_unique(names, mig_resource_name(profile));
      }
    }
    if (c.time_slicing && c.time_slicing->rename_by_default) {
      add_unique(names, std::string(kSharedGpuResource));
    }
  }
  return names;
}

namespace {

bool may_use(const Tenant& tenant, const GpuClass& c) {
  return !tenant.allowed_classes ||
         std::find(tenant.allowed_classes->begin(), tenant.allowed_classes->end(), c.name) !=
             tenant.allowed_classes->end();
}

// A quota key's prefix is a DNS subdomain (apimachinery IsQualifiedName: at most 253).
constexpr size_t kMaxQuotaKeyPrefix = 253;

// "<DeviceClass>.deviceclass.resource.k8s.io/devices", or nullopt when its prefix (all before the
// "/", as a DeviceClass name has none) would be longer than a quota key's may be.
std::optional<std::string> device_class_quota_key(std::string_view device_class) {
  std::string key = std::string(device_class) + std::string(kDeviceClassQuotaSuffix);
  if (key.find('/') > kMaxQuotaKeyPrefix) return std::nullopt;
  return key;
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> tenant_device_class_quota(const CompiledPolicy& policy,
                                                                       const Tenant& tenant) {
  std::vector<std::pair<std::string, int64_t>> out;
  if (!tenant.quota_gpus) return out;
  for (const GpuClass& c : policy.policy().classes) {
    if (!may_use(tenant, c)) continue;
    for (const DeviceClassMapping& m : c.device_classes) {
      std::optional<std::string> key = device_class_quota_key(m.name);
      if (!key) continue;
      out.emplace_back(std::move(*key),
                       saturating_mul(*tenant.quota_gpus, std::max<int64_t>(1, m.devices_per_gpu)));
    }
  }
  return out;
}

std::vector<std::string> resource_quota_notes(const CompiledPolicy& policy) {
  std::vector<std::string> out;
  for (const Tenant& tenant : policy.policy().tenants) {
    if (!tenant.quota_gpus) continue;
    for (const std::string& ns : tenant.namespaces) {
      if (is_literal_namespace(ns)) continue;
      out.push_back("tenant " + tenant.name + ": no ResourceQuota for namespace pattern \"" + ns +
                    "\" (a ResourceQuota lives in one named namespace): create one in each "
                    "namespace it matches (its keys: docs/install.md, \"What render makes\"); "
                    "without it the webhook's GPU013 checks each pod against quota.gpus " +
                    std::to_string(*tenant.quota_gpus) +
                    ", but nothing caps the namespace's total");
    }
    for (const GpuClass& c : policy.policy().classes) {
      if (!may_use(tenant, c)) continue;
      for (const DeviceClassMapping& m : c.device_classes) {
        if (device_class_quota_key(m.name)) continue;
        out.push_back("tenant " + tenant.name + ": no quota key for DeviceClass " + m.name +
                      ": <name>" + std::string(kDeviceClassQuotaSuffix) +
                      " would be longer than a quota key may be (a prefix of at most 253)");
      }
    }
  }
  return out;
}

std::vector<Json> resource_quotas(const CompiledPolicy& policy) {
  std::vector<Json> out;
  for (const Tenant& tenant : policy.policy().tenants) {
    if (!tenant.quota_gpus) continue;
    Json hard = Json::object();
    // Kubernetes counts extended resources in a quota only as requests.<name> (GPU017).
    for (const std::string& name : tenant_gpu_resources(policy, tenant)) {
      hard["requests." + name] = std::to_string(*tenant.quota_gpus);
    }
    // DRA: the quota admission plugin charges a ResourceClaim the devices it may get per
    // DeviceClass (k8s pkg/quota/v1/evaluator/core/resource_claims.go; KEP-4381), so quota.gpus
    // GPU units are quota.gpus × devicesPerGPU devices of each DeviceClass of an allowed class.
    for (const auto& [key, devices] : tenant_device_class_quota(policy, tenant)) {
      hard[key] = std::to_string(devices);
    }
    for (const std::string& ns : tenant.namespaces) {
      if (!is_literal_namespace(ns)) continue;
      out.push_back({{"apiVersion", "v1"},
                     {"kind", "ResourceQuota"},
                     {"metadata",
                      {{"name", "gpuadmit-gpus"},
                       {"namespace", ns},
                       {"labels", {{kManagedBy, "gpuadmit"}}},
                       {"annotations", {{"gpuadmit.io/tenant", tenant.name}}}}},
                     {"spec", {{"hard", hard}}}});
    }
  }
  return out;
}

std::vector<Json> cluster_objects(const CompiledPolicy& policy, const WebhookTarget& target) {
  std::vector<Json> out = priority_classes(policy);
  for (Json& quota : resource_quotas(policy)) out.push_back(std::move(quota));
  out.push_back(mutating_webhook_configuration(policy, target));
  out.push_back(validating_webhook_configuration(policy, target));
  return out;
}

}  // namespace gpuadmit::render
