#include "render/cluster_objects.h"

#include <algorithm>
#include <string>

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

std::vector<Json> resource_quotas(const CompiledPolicy& policy) {
  std::vector<Json> out;
  for (const Tenant& tenant : policy.policy().tenants) {
    if (!tenant.quota_gpus) continue;
    Json hard = Json::object();
    // Kubernetes counts extended resources in a quota only as requests.<name> (GPU017).
    for (const std::string& name : tenant_gpu_resources(policy, tenant)) {
      hard["requests." + name] = std::to_string(*tenant.quota_gpus);
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
