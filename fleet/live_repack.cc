// The live report's what-if (docs/fleet.md, "Repack"): the pods running on a class's
// schedulable nodes packed again with the offline report's packing code (fleet/packing.h,
// first-fit decreasing), then the same stranded rule as now.

#include <algorithm>
#include <map>

#include "fleet/live_internal.h"
#include "fleet/model.h"
#include "fleet/node_fit.h"
#include "policies/mig_profiles.h"

namespace gpuadmit::fleet::live_detail {
namespace {

int64_t pod_units(const LivePod& pod, const LiveClassReport& c, const GfdLabels& gfd) {
  int64_t units = 0;
  for (const PodGpuRequest& r : pod.requests)
    units = saturating_add(units, units_of(r.resource, r.units, c.shape, gfd));
  return units;
}

// The MIG instances of a pod: nvidia.com/mig-<profile> as is; nvidia.com/gpu an instance of the
// node's single-strategy profile, else of the largest profile (a whole GPU).
std::vector<std::pair<std::string, int64_t>> pod_instances(const LivePod& pod, const GfdLabels& gfd,
                                                           const std::string& whole) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const PodGpuRequest& r : pod.requests) {
    std::string profile = mig_profile_of_resource(r.resource);
    if (profile.empty()) profile = gfd.mig_single_profile();
    if (profile.empty()) profile = whole;
    out.emplace_back(std::move(profile), r.units);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether a pending pod of `units` could take `free` units of a repacked node.
bool pending_fits(const Build& b, const LiveClassReport& c, const LiveNode& node, int64_t free) {
  return std::any_of(b.shapes.begin(), b.shapes.end(), [&](const PendingShape& s) {
    if (s.requests.empty()) return false;
    int64_t units = 0;
    for (const PodGpuRequest& r : s.requests)
      units = saturating_add(units, units_of(r.resource, r.units, c.shape, node.gfd));
    return units <= free && admits(s, node);
  });
}

// Whole GPUs and replicas: every node its own capacity, pods grouped by units.
void repack_units(Build& b, LiveClassReport& c, const std::vector<size_t>& nodes) {
  ClassShape shape = c.shape;
  shape.nodes = static_cast<int64_t>(nodes.size());
  shape.node_units.clear();
  FleetInput input;
  input.workloads.emplace_back();
  std::map<int64_t, int64_t> pods_by_units;
  for (size_t n : nodes) {
    const LiveNodeReport& node = b.report.nodes[n];
    shape.node_units.push_back(node.capacity);
    for (size_t p : node.pods) {
      ++pods_by_units[pod_units(b.input.pods[p], c, b.input.nodes[node.node].gfd)];
    }
  }
  std::vector<size_t> groups;
  for (const auto& [units, pods] : pods_by_units) {
    if (units <= 0) continue;
    PodGroup g;
    g.class_name = c.name;
    g.pods = pods;
    g.units = g.gpus = units;
    groups.push_back(input.groups.size());
    input.groups.push_back(std::move(g));
  }
  const ClassPacking packed = pack_class(shape, input, groups);
  for (const UnplacedPods& u : packed.unplaced) c.repack.unplaced_pods += u.pods;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t used = packed.node_used[i];
    const int64_t free = shape.node_units[i] - used;
    if (used == 0 && shape.node_units[i] > 0) ++c.repack.empty_nodes;
    if (used == 0 || free <= 0 || (c.usual_units > 0 && free >= c.usual_units)) continue;
    if (pending_fits(b, c, b.input.nodes[b.report.nodes[nodes[i]].node], free)) continue;
    c.repack.stranded = saturating_add(c.repack.stranded, free);
    ++c.repack.stranded_nodes;
  }
}

// MIG: the pods' instances on the nodes' GPUs re-partitioned at will (the offline MIG packing
// and its stranded rule: a partly used GPU strands its free slices when no instance of the
// class's pods fits them).
void repack_mig(Build& b, LiveClassReport& c, const std::vector<size_t>& nodes,
                const GpuClass& gpu_class) {
  ClassShape shape = c.shape;
  shape.nodes = static_cast<int64_t>(nodes.size());
  std::map<int64_t, int64_t> gpu_counts;
  for (size_t n : nodes) ++gpu_counts[b.report.nodes[n].gpus];
  shape.gpus_per_node = 0;  // the most common node size
  int64_t best = 0;
  for (const auto& [gpus, count] : gpu_counts) {
    if (count > best) {
      best = count;
      shape.gpus_per_node = gpus;
    }
  }
  std::string whole = "7g.80gb";  // the class's largest profile: a whole GPU
  int largest = -1;
  for (const std::string& p : gpu_class.mig->profiles) {
    const std::optional<MigProfileShape> s = parse_mig_profile(p);
    if (s && s->compute > largest) {
      largest = s->compute;
      whole = p;
    }
  }
  FleetInput input;
  input.workloads.emplace_back();
  std::map<std::vector<std::pair<std::string, int64_t>>, PodGroup> by_instances;
  for (size_t n : nodes) {
    const LiveNodeReport& node = b.report.nodes[n];
    for (size_t p : node.pods) {
      if (b.input.pods[p].requests.empty()) continue;  // DRA claims only
      const GfdLabels& gfd = b.input.nodes[node.node].gfd;
      PodGroup& g = by_instances[pod_instances(b.input.pods[p], gfd, whole)];
      if (g.pods++ == 0) g.units = g.gpus = pod_units(b.input.pods[p], c, gfd);
    }
  }
  std::vector<size_t> groups;
  for (auto& [instances, g] : by_instances) {
    g.class_name = c.name;
    g.mig = instances;
    groups.push_back(input.groups.size());
    input.groups.push_back(std::move(g));
  }
  const ClassPacking packed = pack_class(shape, input, groups);
  for (const UnplacedPods& u : packed.unplaced) c.repack.unplaced_pods += u.pods;
  c.repack.stranded = packed.stranded;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (packed.node_used[i] == 0) ++c.repack.empty_nodes;
    const auto& cells = packed.cells[i];
    if (std::any_of(cells.begin(), cells.end(), [](const GpuCell& g) { return g.stranded; }))
      ++c.repack.stranded_nodes;
  }
}

}  // namespace

void repack_classes(Build& b) {
  for (size_t cls = 0; cls < b.report.classes.size(); ++cls) {
    LiveClassReport& c = b.report.classes[cls];
    std::vector<size_t> nodes;
    for (size_t n : b.class_nodes[cls]) {
      if (b.report.nodes[n].state == NodeState::kSchedulable) nodes.push_back(n);
    }
    const GpuClass& gpu_class = b.policy.policy().classes[cls];
    int64_t gpus = 0;
    for (size_t n : nodes) gpus = saturating_add(gpus, b.report.nodes[n].gpus);
    if (gpus > kMaxRepackGpus) {
      c.repack.skipped = true;
      continue;
    }
    if (c.shape.unit == ClassUnit::kMigSlice) {
      repack_mig(b, c, nodes, gpu_class);
    } else {
      repack_units(b, c, nodes);
    }
    c.repack.complete = c.repack.unplaced_pods == 0;
  }
}

}  // namespace gpuadmit::fleet::live_detail
