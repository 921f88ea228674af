#pragma once
// Each tenant's GPUs in the live fleet (docs/fleet.md, "Tenants"): per namespace, the GPUs its
// running and its pending pods request, against the tenant's `quota.gpus` — a namespace's
// quota (SPEC §3), which Kubernetes' ResourceQuota charges at creation, so pending pods hold
// it too — and per class. GPUs are counted as GPU013 and `gpuadmit lint` count them: every GPU
// resource's units added (a whole GPU, a MIG instance, a time-slice replica each count 1).
//
//   std::vector<LiveTenantReport> tenants = tenant_usage(input, report, policy);

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleet/live_model.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet {

struct LiveReport;

struct TenantNamespaceUsage {
  std::string ns;
  int64_t running = 0, pending = 0;            // GPUs
  int64_t running_pods = 0, pending_pods = 0;  // GPU pods
  // Pods that ask for GPUs through DRA claims: their devices are not in `running`/`pending`
  // (which claim a pod holds is not in the Pod).
  int64_t claim_pods = 0;
  int64_t held() const;  // running + pending: what the namespace's ResourceQuota charges
};

struct TenantClassUsage {
  int cls = -1;  // index in LiveReport::classes; -1: no class
  int64_t running = 0, pending = 0;
  int64_t running_units = 0;  // the running pods' requests in the class's unit (its nodes')
};

struct LiveTenantReport {
  std::string name;                              // "" for the namespaces of no tenant
  std::optional<int64_t> quota;                  // quota.gpus: each namespace's
  std::vector<TenantNamespaceUsage> namespaces;  // those with GPU pods, by name
  std::vector<TenantClassUsage> classes;         // those with GPUs, class order (no class last)
  int64_t running = 0, pending = 0;
  // What its running pods cost per hour, in millionths (fleet/cost.h): each pod on a priced
  // class's node, its units as GPUs of that node × the class's price.
  int64_t cost_micros = 0;
  // Namespaces holding more than the quota (running + pending).
  std::vector<size_t> over_quota;  // indices in `namespaces`
};

// Every tenant of the policy, in its order (with no pod too: the same series on every run), then
// the namespaces of no tenant when they have GPU pods. Exempt namespaces are counted under the
// tenant their name matches, as the policy's tenants list them.
std::vector<LiveTenantReport> tenant_usage(const LiveInput& input, const LiveReport& report,
                                           const CompiledPolicy& policy);

}  // namespace gpuadmit::fleet
