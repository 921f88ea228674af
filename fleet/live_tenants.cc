#include "fleet/live_tenants.h"

#include <algorithm>
#include <map>

#include "engine/saturating.h"
#include "fleet/live_report.h"

namespace gpuadmit::fleet {
namespace {

// A pod's GPUs as GPU013 counts them: every GPU resource's units added.
int64_t pod_gpus(const LivePod& pod) {
  int64_t n = 0;
  for (const PodGpuRequest& r : pod.requests) n = saturating_add(n, r.units);
  return n;
}

// Each pod's class: its node's for a running pod, the one judged for a pending pod; -1: none.
std::vector<int> pod_classes(const LiveInput& input, const LiveReport& report) {
  std::vector<int> cls(input.pods.size(), -1);
  for (const LiveNodeReport& n : report.nodes) {
    for (size_t p : n.pods) cls[p] = n.cls;
  }
  for (const PendingEntry& e : report.pending) cls[e.pod] = e.cls;
  return cls;
}

// What one tenant's pods add up to, keyed while collecting.
struct Tally {
  std::map<std::string, TenantNamespaceUsage, std::less<>> namespaces;
  std::map<int, TenantClassUsage> classes;
};

void count_pod(Tally& t, const LivePod& pod, int cls) {
  TenantNamespaceUsage& ns = t.namespaces[pod.ns];
  ns.ns = pod.ns;
  TenantClassUsage& c = t.classes[cls];
  c.cls = cls;
  const int64_t gpus = pod_gpus(pod);
  const bool running = !pod.node_name.empty();
  (running ? ns.running : ns.pending) = saturating_add(running ? ns.running : ns.pending, gpus);
  (running ? c.running : c.pending) = saturating_add(running ? c.running : c.pending, gpus);
  ++(running ? ns.running_pods : ns.pending_pods);
  ns.claim_pods += pod.dra;
}

LiveTenantReport finish(std::string name, std::optional<int64_t> quota, Tally& t) {
  LiveTenantReport r;
  r.name = std::move(name);
  r.quota = quota;
  for (auto& [ns, usage] : t.namespaces) {
    r.running = saturating_add(r.running, usage.running);
    r.pending = saturating_add(r.pending, usage.pending);
    if (quota && usage.held() > *quota) r.over_quota.push_back(r.namespaces.size());
    r.namespaces.push_back(std::move(usage));
  }
  for (auto& [cls, usage] : t.classes) {
    if (usage.running == 0 && usage.pending == 0) continue;
    r.classes.push_back(usage);
  }
  // The map orders -1 (no class) first; the report lists it last.
  std::stable_partition(r.classes.begin(), r.classes.end(),
                        [](const TenantClassUsage& c) { return c.cls >= 0; });
  return r;
}

}  // namespace

int64_t TenantNamespaceUsage::held() const { return saturating_add(running, pending); }

std::vector<LiveTenantReport> tenant_usage(const LiveInput& input, const LiveReport& report,
                                           const CompiledPolicy& policy) {
  const std::vector<Tenant>& tenants = policy.policy().tenants;
  std::vector<Tally> tallies(tenants.size() + 1);  // the last: namespaces of no tenant
  const std::vector<int> classes = pod_classes(input, report);
  for (size_t p = 0; p < input.pods.size(); ++p) {
    const Tenant* tenant = policy.tenant_for(input.pods[p].ns);
    const size_t t =
        tenant != nullptr ? static_cast<size_t>(tenant - tenants.data()) : tenants.size();
    count_pod(tallies[t], input.pods[p], classes[p]);
  }
  std::vector<LiveTenantReport> out;
  for (size_t t = 0; t < tenants.size(); ++t) {
    out.push_back(finish(tenants[t].name, tenants[t].quota_gpus, tallies[t]));
  }
  if (!tallies.back().namespaces.empty()) out.push_back(finish("", std::nullopt, tallies.back()));
  return out;
}

}  // namespace gpuadmit::fleet
