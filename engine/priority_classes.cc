#include "engine/priority_classes.h"

namespace gpuadmit {

std::optional<ClusterPriorityClass> lowest_global_default(
    const std::vector<ClusterPriorityClass>& classes) {
  const ClusterPriorityClass* best = nullptr;
  for (const ClusterPriorityClass& c : classes) {
    if (c.global_default && (best == nullptr || c.value < best->value)) best = &c;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

bool is_global_default_class(std::string_view name, const CompiledPolicy& policy,
                             const PriorityClassSource* cluster) {
  if (name.empty()) return false;
  if (cluster != nullptr && cluster->synced()) {
    const std::optional<ClusterPriorityClass> global = cluster->global_default();
    return global && global->name == name;
  }
  const PriorityClassDecl* declared = policy.global_default_priority_class();
  return declared != nullptr && declared->name == name;
}

std::vector<std::string> priority_class_disagreements(const CompiledPolicy& policy,
                                                      const PriorityClassSource& cluster) {
  std::vector<std::string> out;
  for (const PriorityClassDecl& declared : policy.policy().priority_classes) {
    const std::optional<ClusterPriorityClass> actual = cluster.find(declared.name);
    const std::string prefix = "PriorityClass " + declared.name + ": ";
    if (!actual) {
      out.push_back(prefix + "not in the cluster; pods are not given it");
      continue;
    }
    if (actual->value != declared.value) {
      out.push_back(prefix + "the policy declares value " + std::to_string(declared.value) +
                    ", the cluster has " + std::to_string(actual->value) +
                    "; pods get the cluster's");
    }
    if (actual->preemption_policy != declared.preemption_policy) {
      out.push_back(prefix + "the policy declares preemptionPolicy " + declared.preemption_policy +
                    ", the cluster has " + actual->preemption_policy + "; pods get the cluster's");
    }
  }
  const PriorityClassDecl* declared = policy.global_default_priority_class();
  const std::optional<ClusterPriorityClass> actual = cluster.global_default();
  const std::string declared_name = declared != nullptr ? declared->name : "";
  const std::string actual_name = actual ? actual->name : "";
  if (declared_name != actual_name) {
    out.push_back("globalDefault: the policy declares " +
                  (declared_name.empty() ? std::string("none") : declared_name) +
                  ", the cluster's is " +
                  (actual_name.empty() ? std::string("none") : actual_name) +
                  "; the cluster's counts as unset");
  }
  return out;
}

}  // namespace gpuadmit
