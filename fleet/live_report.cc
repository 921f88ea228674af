#include "fleet/live_report.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "fleet/cost.h"
#include "fleet/live_internal.h"
#include "fleet/model.h"
#include "fleet/node_fit.h"
#include "policies/mig_profiles.h"

namespace gpuadmit::fleet {
namespace {

using live_detail::Build;
using live_detail::PendingShape;

int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

// Taints the node lifecycle controller sets for a state counted on its own (NotReady,
// unreachable, cordoned: TaintNodesByCondition), not as "tainted".
bool state_taint(const Taint& taint) {
  return taint.key == "node.kubernetes.io/not-ready" ||
         taint.key == "node.kubernetes.io/unreachable" ||
         taint.key == "node.kubernetes.io/unschedulable";
}

// The class's pods tolerate the class's own taints (the tolerations mutation writes, for each,
// the toleration that tolerates exactly it: mutators/tolerations.cc toleration_for) and, through
// the ExtendedResourceToleration admission plugin, a NoSchedule taint keyed by a GPU resource
// they request.
bool class_tolerates(const GpuClass* c, const LiveNode& node, const Taint& taint) {
  if (taint.effect == "NoSchedule" && amount_of(node.allocatable, taint.key) > 0) return true;
  if (c == nullptr) return false;
  return std::any_of(c->taints.begin(), c->taints.end(), [&](const Taint& t) {
    return t.key == taint.key && (t.effect.empty() || t.effect == taint.effect) &&
           (t.value.empty() || t.value == taint.value);
  });
}

NodeState node_state(const LiveNode& node, const GpuClass* c, std::string& taint_text) {
  if (!node.ready) return NodeState::kNotReady;
  if (node.unschedulable) return NodeState::kCordoned;
  for (const Taint& t : node.taints) {
    if ((t.effect != "NoSchedule" && t.effect != "NoExecute") || state_taint(t)) continue;
    if (class_tolerates(c, node, t)) continue;
    taint_text = t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
    return NodeState::kTainted;
  }
  return NodeState::kSchedulable;
}

// Capacity, GPUs and notes of a node in its class's unit.
void size_node(const LiveNode& node, const LiveClassReport* c, LiveNodeReport& r) {
  const GfdLabels& gfd = node.gfd;
  if (c == nullptr) {
    for (const ResourceAmount& a : node.allocatable)
      r.capacity = saturating_add(r.capacity, a.amount);
    r.capacity = saturating_add(r.capacity, node.dra_devices);
    r.gpus = r.capacity;
    return;
  }
  const ClassShape& shape = c->shape;
  for (const ResourceAmount& a : node.allocatable)
    r.capacity = saturating_add(r.capacity, units_of(a.resource, a.amount, shape, gfd));
  if (shape.unit == ClassUnit::kGpu) r.capacity = saturating_add(r.capacity, node.dra_devices);
  if (shape.unit == ClassUnit::kReplica) {
    r.units_per_gpu = gfd.replicas.value_or(0) > 1 ? *gfd.replicas : shape.replicas;
  } else {
    r.units_per_gpu = shape.units_per_gpu();
  }
  r.gpus = ceil_div(r.capacity, r.units_per_gpu);
  if (shape.unit == ClassUnit::kMigSlice && gfd.mig_strategy == "mixed" && gfd.count)
    r.gpus = std::max(r.gpus, *gfd.count);
  auto note = [&](std::string text) { r.notes.push_back(std::move(text)); };
  if (r.capacity == 0) note("no GPU allocatable (is the device plugin running?)");
  if (shape.unit == ClassUnit::kGpu && gfd.count && *gfd.count != r.capacity && r.capacity > 0)
    note("nvidia.com/gpu.count is " + std::to_string(*gfd.count) + ", allocatable " +
         std::to_string(r.capacity));
  if (shape.unit == ClassUnit::kGpu && gfd.replicas.value_or(0) > 1)
    note("time-sliced " + std::to_string(*gfd.replicas) +
         " ways (nvidia.com/gpu.replicas) in a class of whole GPUs: replicas counted as GPUs");
  if (shape.unit == ClassUnit::kReplica && gfd.replicas.value_or(0) > 1 &&
      *gfd.replicas != shape.replicas)
    note("time-sliced " + std::to_string(*gfd.replicas) + " ways (nvidia.com/gpu.replicas), " +
         "the class says " + std::to_string(shape.replicas));
  if (shape.unit == ClassUnit::kMigSlice && gfd.mig_strategy.empty())
    note("no nvidia.com/mig.strategy label in a MIG class");
  if (!gfd.mig_config_state.empty() && gfd.mig_config_state != "success")
    note("MIG reconfiguration: nvidia.com/mig.config.state=" + gfd.mig_config_state +
         (gfd.mig_config.empty() ? "" : " (nvidia.com/mig.config=" + gfd.mig_config + ")"));
}

// Nodes of a class or with GPUs (or GPU pods bound), with their pods and state.
void collect_nodes(Build& b) {
  const LiveInput& in = b.input;
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t n = 0; n < in.nodes.size(); ++n) by_name.emplace(in.nodes[n].name, n);
  std::vector<std::vector<size_t>> bound(in.nodes.size());
  for (size_t p = 0; p < in.pods.size(); ++p) {
    const LivePod& pod = in.pods[p];
    if (pod.node_name.empty()) continue;
    auto it = by_name.find(pod.node_name);
    if (it == by_name.end()) {
      ++b.report.pods_on_unknown_nodes;
      continue;
    }
    bound[it->second].push_back(p);
  }
  for (size_t n = 0; n < in.nodes.size(); ++n) {
    const LiveNode& node = in.nodes[n];
    const GpuClass* c = class_of_node(node, b.policy);
    const bool gpus =
        node.dra_devices > 0 || std::any_of(node.allocatable.begin(), node.allocatable.end(),
                                            [](const ResourceAmount& a) { return a.amount > 0; });
    if (c == nullptr && !gpus && bound[n].empty()) continue;
    LiveNodeReport r;
    r.node = n;
    r.pods = std::move(bound[n]);
    if (c != nullptr) r.cls = static_cast<int>(c - b.policy.policy().classes.data());
    r.state = node_state(node, c, r.taint);
    size_node(node, c != nullptr ? &b.report.classes[static_cast<size_t>(r.cls)] : nullptr, r);
    const ClassShape* shape =
        c != nullptr ? &b.report.classes[static_cast<size_t>(r.cls)].shape : nullptr;
    for (size_t p : r.pods) {
      for (const PodGpuRequest& req : in.pods[p].requests) {
        add_amount(r.used, req.resource, req.units);
        r.used_units = saturating_add(
            r.used_units,
            shape != nullptr ? units_of(req.resource, req.units, *shape, node.gfd) : req.units);
      }
    }
    if (shape == nullptr || shape->unit == ClassUnit::kGpu)
      r.used_units = saturating_add(r.used_units, node.dra_allocated);
    b.report.running_gpu_pods += static_cast<int64_t>(r.pods.size());
    if (r.cls >= 0) b.class_nodes[static_cast<size_t>(r.cls)].push_back(b.report.nodes.size());
    if (r.cls < 0) b.report.unmatched.push_back(b.report.nodes.size());
    b.report.nodes.push_back(std::move(r));
  }
}

// The most common request among the class's running and pending pods (ties: the smaller, then
// the first seen): the size a free slot must take to be useful.
void usual_request(Build& b, size_t cls) {
  LiveClassReport& c = b.report.classes[cls];
  struct Tally {
    std::vector<PodGpuRequest> requests;
    int64_t count = 0, units = 0;
    size_t first = 0;
  };
  std::map<std::string, Tally> tally;
  auto count = [&](const LivePod& pod, const GfdLabels& gfd) {
    Tally& t = tally[requests_text(pod.requests)];
    if (t.count++ == 0) {
      t.requests = pod.requests;
      t.first = tally.size();
      for (const PodGpuRequest& r : pod.requests)
        t.units = saturating_add(t.units, units_of(r.resource, r.units, c.shape, gfd));
    }
  };
  for (size_t r : b.class_nodes[cls]) {
    const LiveNodeReport& node = b.report.nodes[r];
    for (size_t p : node.pods) count(b.input.pods[p], b.input.nodes[node.node].gfd);
  }
  for (const PendingShape& s : b.shapes) {
    if (s.cls != static_cast<int>(cls)) continue;
    for (size_t p : s.pods) count(b.input.pods[p], GfdLabels{});
  }
  const Tally* best = nullptr;
  for (const auto& [key, t] : tally) {
    if (t.requests.empty()) continue;
    if (best == nullptr || t.count > best->count ||
        (t.count == best->count &&
         (t.units < best->units || (t.units == best->units && t.first < best->first)))) {
      best = &t;
    }
  }
  if (best != nullptr) {
    c.usual = best->requests;
    c.usual_units = best->units;
  }
}

// A partly used schedulable node strands its free units when neither the class's usual pod nor
// any pending GPU pod (the scheduler's filters passed) fits them.
void mark_stranded(Build& b, size_t cls) {
  LiveClassReport& c = b.report.classes[cls];
  if (c.usual.empty()) return;  // no pod asks for the class's resources: no size to miss
  for (size_t r : b.class_nodes[cls]) {
    LiveNodeReport& node = b.report.nodes[r];
    if (node.state != NodeState::kSchedulable || node.used_units == 0 || node.free() == 0) continue;
    const LiveNode& live = b.input.nodes[node.node];
    const ResourceAmounts free = live_detail::free_amounts(live, node);
    if (gpu_requests_fit(c.usual, free)) continue;
    const bool pending_fits =
        std::any_of(b.shapes.begin(), b.shapes.end(), [&](const PendingShape& s) {
          return !s.requests.empty() && gpu_requests_fit(s.requests, free) &&
                 live_detail::admits(s, live);
        });
    if (pending_fits) continue;
    node.stranded = node.free();
    c.stranded = saturating_add(c.stranded, node.stranded);
    ++c.stranded_nodes;
  }
}

void sum_class(Build& b, size_t cls) {
  LiveClassReport& c = b.report.classes[cls];
  for (size_t r : b.class_nodes[cls]) {
    const LiveNodeReport& node = b.report.nodes[r];
    ++c.nodes;
    c.total = saturating_add(c.total, node.capacity);
    c.used = saturating_add(c.used, node.used_units);
    c.running_pods += static_cast<int64_t>(node.pods.size());
    switch (node.state) {
      case NodeState::kSchedulable:
        ++c.schedulable;
        c.free = saturating_add(c.free, node.free());
        if (node.used_units == 0 && node.capacity > 0) ++c.empty_nodes;
        continue;
      case NodeState::kCordoned:
        ++c.cordoned;
        break;
      case NodeState::kNotReady:
        ++c.not_ready;
        break;
      case NodeState::kTainted:
        ++c.tainted;
        break;
    }
    c.unavailable = saturating_add(c.unavailable, node.free());
  }
}

// What the class's GPUs cost per hour (fleet/cost.h), node by node: each node's units as GPUs
// of that node (time-slice replicas may differ between nodes).
void price_class(Build& b, size_t cls) {
  const std::optional<GpuPrice>& price = b.policy.policy().classes[cls].price;
  if (!price) return;
  LiveClassReport& c = b.report.classes[cls];
  c.cost.emplace();
  c.cost->per_gpu_hour = price->micros_per_gpu_hour;
  for (size_t r : b.class_nodes[cls]) {
    const LiveNodeReport& node = b.report.nodes[r];
    auto cost = [&](int64_t units) {
      return cost_micros(units, node.units_per_gpu, price->micros_per_gpu_hour);
    };
    c.cost->used = saturating_add(c.cost->used, cost(node.used_units));
    c.cost->idle = saturating_add(c.cost->idle, cost(node.free()));
    c.cost->stranded = saturating_add(c.cost->stranded, cost(node.stranded));
  }
}

// Pending pods with GPU requests, grouped by identical requests, placement and class.
void collect_shapes(Build& b) {
  std::unordered_map<std::string, size_t> index;
  for (size_t p = 0; p < b.input.pods.size(); ++p) {
    const LivePod& pod = b.input.pods[p];
    if (!pod.node_name.empty()) continue;
    int cls = -1;
    if (pod.class_known) {
      const GpuClass* c = b.policy.find_class(pod.class_name);
      cls = static_cast<int>(c - b.policy.policy().classes.data());
    }
    std::string key = requests_text(pod.requests) + "\x1f" + std::to_string(cls) + "\x1f";
    key += pod.placement.dump();
    auto [it, added] = index.emplace(std::move(key), b.shapes.size());
    if (added) b.shapes.push_back({pod.requests, &pod.placement, cls, {}});
    b.shapes[it->second].pods.push_back(p);
  }
}

}  // namespace

namespace live_detail {

ResourceAmounts free_amounts(const LiveNode& node, const LiveNodeReport& r) {
  ResourceAmounts free;
  for (const ResourceAmount& a : node.allocatable) {
    const int64_t left = a.amount - amount_of(r.used, a.resource);
    free.push_back({a.resource, left > 0 ? left : 0});
  }
  return free;
}

bool admits(const PendingShape& shape, const LiveNode& node) {
  const Json* tolerations = find_member(*shape.placement, "tolerations");
  return !refused_as_unschedulable(tolerations, node) &&
         untolerated_taint(tolerations, node) == nullptr &&
         node_affinity_matches(*shape.placement, node);
}

}  // namespace live_detail

std::string_view state_name(NodeState state) {
  switch (state) {
    case NodeState::kSchedulable:
      return "schedulable";
    case NodeState::kCordoned:
      return "cordoned";
    case NodeState::kNotReady:
      return "not ready";
    case NodeState::kTainted:
      return "tainted";
  }
  return "";
}

int64_t units_of(std::string_view resource, int64_t amount, const ClassShape& shape,
                 const GfdLabels& gfd) {
  if (shape.unit != ClassUnit::kMigSlice) return amount;
  std::string profile = mig_profile_of_resource(resource);
  if (profile.empty()) profile = gfd.mig_single_profile();
  const std::optional<MigProfileShape> parsed = parse_mig_profile(profile);
  const int64_t compute = parsed ? parsed->compute : shape.mig.compute_slices;
  return saturating_mul(amount, compute);
}

std::string requests_text(const std::vector<PodGpuRequest>& requests) {
  std::string out;
  for (const PodGpuRequest& r : requests) {
    if (!out.empty()) out += " + ";
    out += std::to_string(r.units) + " " + r.resource;
  }
  return out;
}

LiveReport build_live_report(const LiveInput& input, const CompiledPolicy& policy) {
  LiveReport report;
  for (const GpuClass& c : policy.policy().classes) {
    LiveClassReport r;
    r.name = c.name;
    r.shape = class_shape(c);
    report.classes.push_back(std::move(r));
    if (c.price) report.currency = c.price->currency;  // one for every class (the loader's check)
  }
  Build b{input, policy, report, std::vector<std::vector<size_t>>(report.classes.size()), {}};
  collect_nodes(b);
  collect_shapes(b);
  for (size_t c = 0; c < report.classes.size(); ++c) {
    sum_class(b, c);
    usual_request(b, c);
    mark_stranded(b, c);
    price_class(b, c);
  }
  live_detail::judge_pending(b);
  live_detail::repack_classes(b);
  report.tenants = tenant_usage(input, report, policy);
  return report;
}

}  // namespace gpuadmit::fleet
