#include "fleet/live_tenants.h"

#include <algorithm>
#include <map>

#include "engine/saturating.h"
#include "fleet/cost.h"
#include "fleet/live_report.h"

namespace gpuadmit::fleet {
namespace {

// A pod's GPUs as GPU013 counts them: every GPU resource's units added.
int64_t pod_gpus(const LivePod& pod) {
  int64_t n = 0;
  for (const PodGpuRequest& r : pod.requests) n = saturating_add(n, r.units);
  return n;
}

// Where a pod is counted: its class (its node's for a running pod, the one judged for a
// pending pod; -1: none) and, running, its node.
struct PodPlace {
  int cls = -1;
  const LiveNode* node = nullptr;
  int64_t units_per_gpu = 1;  // the node's (time-slice replicas may differ from node to node)
};

std::vector<PodPlace> pod_places(const LiveInput& input, const LiveReport& report) {
  std::vector<PodPlace> places(input.pods.size());
  for (const LiveNodeReport& n : report.nodes) {
    for (size_t p : n.pods) places[p] = {n.cls, &input.nodes[n.node], n.units_per_gpu};
  }
  for (const PendingEntry& e : report.pending) places[e.pod].cls = e.cls;
  return places;
}

// The pod's requests in its node's class's unit, as the node report counts them.
int64_t tenant_pod_units(const LivePod& pod, const PodPlace& place, const LiveReport& report) {
  if (place.cls < 0 || place.node == nullptr) return 0;
  const ClassShape& shape = report.classes[static_cast<size_t>(place.cls)].shape;
  int64_t n = 0;
  for (const PodGpuRequest& r : pod.requests)
    n = saturating_add(n, units_of(r.resource, r.units, shape, place.node->gfd));
  return n;
}

// What one tenant's pods add up to, keyed while collecting.
struct TenantTally {
  std::map<std::string, TenantNamespaceUsage, std::less<>> namespaces;
  std::map<int, TenantClassUsage> classes;
  int64_t cost = 0;
};

void count_pod(TenantTally& t, const LivePod& pod, const PodPlace& place, const LiveReport& report,
               const CompiledPolicy& policy) {
  TenantNamespaceUsage& ns = t.namespaces[pod.ns];
  ns.ns = pod.ns;
  TenantClassUsage& c = t.classes[place.cls];
  c.cls = place.cls;
  const int64_t units = tenant_pod_units(pod, place, report);
  c.running_units = saturating_add(c.running_units, units);
  if (place.cls >= 0) {
    if (const auto& price = policy.policy().classes[static_cast<size_t>(place.cls)].price) {
      t.cost = saturating_add(t.cost,
                              cost_micros(units, place.units_per_gpu, price->micros_per_gpu_hour));
    }
  }
  const int64_t gpus = pod_gpus(pod);
  const bool running = !pod.node_name.empty();
  (running ? ns.running : ns.pending) = saturating_add(running ? ns.running : ns.pending, gpus);
  (running ? c.running : c.pending) = saturating_add(running ? c.running : c.pending, gpus);
  ++(running ? ns.running_pods : ns.pending_pods);
  ns.claim_pods += pod.dra;
}

LiveTenantReport finish_tenant(std::string name, std::optional<int64_t> quota, TenantTally& t) {
  LiveTenantReport r;
  r.cost_micros = t.cost;
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
  std::vector<TenantTally> tallies(tenants.size() + 1);  // the last: namespaces of no tenant
  const std::vector<PodPlace> places = pod_places(input, report);
  for (size_t p = 0; p < input.pods.size(); ++p) {
    const Tenant* tenant = policy.tenant_for(input.pods[p].ns);
    const size_t t =
        tenant != nullptr ? static_cast<size_t>(tenant - tenants.data()) : tenants.size();
    count_pod(tallies[t], input.pods[p], places[p], report, policy);
  }
  std::vector<LiveTenantReport> out;
  for (size_t t = 0; t < tenants.size(); ++t) {
    out.push_back(finish_tenant(tenants[t].name, tenants[t].quota_gpus, tallies[t]));
  }
  if (!tallies.back().namespaces.empty())
    out.push_back(finish_tenant("", std::nullopt, tallies.back()));
  return out;
}

}  // namespace gpuadmit::fleet
