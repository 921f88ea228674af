// Why each pending GPU pod is pending (docs/fleet.md, "Pending pods"): its requests checked
// against every node of its class with the scheduler's filters (fleet/node_fit.h).

#include <algorithm>
#include <map>

#include "fleet/live_internal.h"
#include "fleet/model.h"
#include "fleet/node_fit.h"

namespace gpuadmit::fleet::live_detail {
namespace {

struct Verdict {
  PendingReason reason = PendingReason::kNoClass;
  std::string detail;
};

std::string plural(int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Why each node large enough refuses the pod, counted: "1 cordoned, 2 with taint
// dedicated=infer:NoSchedule not tolerated, 1 not matching its node affinity/selector".
std::string refusals(const PendingShape& shape, const std::vector<const LiveNode*>& nodes) {
  const Json* tolerations = find_member(*shape.placement, "tolerations");
  int64_t cordoned = 0, affinity = 0;
  std::map<std::string, int64_t> taints;
  for (const LiveNode* node : nodes) {
    if (refused_as_unschedulable(tolerations, *node)) {
      ++cordoned;
    } else if (const Taint* t = untolerated_taint(tolerations, *node)) {
      ++taints[t->key + (t->value.empty() ? "" : "=" + t->value) + ":" + t->effect];
    } else {
      ++affinity;
    }
  }
  std::string out = "of " + plural(static_cast<int64_t>(nodes.size()), "node") + " large enough: ";
  std::string parts;
  auto add = [&](const std::string& part) { parts += (parts.empty() ? "" : ", ") + part; };
  if (cordoned > 0) add(std::to_string(cordoned) + " cordoned");
  for (const auto& [taint, n] : taints)
    add(std::to_string(n) + " with taint " + taint + " not tolerated");
  if (affinity > 0) add(std::to_string(affinity) + " not matching its node affinity/selector");
  return out + parts;
}

// The first request no node of the class can hold even empty.
std::string too_big(const PendingShape& shape, const Build& b, const std::vector<size_t>& nodes) {
  for (const PodGpuRequest& r : shape.requests) {
    int64_t largest = 0;
    for (size_t n : nodes) {
      largest = std::max(largest,
                         amount_of(b.input.nodes[b.report.nodes[n].node].allocatable, r.resource));
    }
    if (r.units > largest) {
      return "asks " + std::to_string(r.units) + " " + r.resource + "; the largest node has " +
             std::to_string(largest);
    }
  }
  return "";
}

// Among the admitting nodes: the first request that fits no single node's free amount, with
// what is free in total and at most on one node.
Verdict by_free(const PendingShape& shape, const Build& b, const std::vector<size_t>& admitting) {
  for (const PodGpuRequest& r : shape.requests) {
    int64_t total = 0, most = 0;
    for (size_t n : admitting) {
      const LiveNodeReport& node = b.report.nodes[n];
      const int64_t free = amount_of(free_amounts(b.input.nodes[node.node], node), r.resource);
      total = saturating_add(total, free);
      most = std::max(most, free);
    }
    if (r.units <= most) continue;
    std::string detail = std::to_string(total) + " " + r.resource + " free on " +
                         plural(static_cast<int64_t>(admitting.size()), "admitting node");
    if (total >= r.units) {
      return {PendingReason::kFragmentation, detail + ", at most " + std::to_string(most) +
                                                 " on one; asks " + std::to_string(r.units)};
    }
    return {PendingReason::kClassFull, detail + "; asks " + std::to_string(r.units)};
  }
  // Each request fits some node, but no node fits them all together.
  return {PendingReason::kFragmentation,
          "no admitting node has all of " + requests_text(shape.requests) + " free at once"};
}

Verdict judge(const PendingShape& shape, const Build& b) {
  const LivePod& first = b.input.pods[shape.pods.front()];
  if (!first.scheduling_gates.empty()) {
    std::string gates;
    for (const std::string& g : first.scheduling_gates) gates += (gates.empty() ? "" : ", ") + g;
    return {PendingReason::kGated, "schedulingGates: " + gates};
  }
  if (shape.cls < 0) {
    return {PendingReason::kNoClass,
            first.class_name.empty() ? "resolves to no class"
                                     : "\"" + first.class_name + "\" is not a class of the policy"};
  }
  if (shape.requests.empty()) {
    return {PendingReason::kDra, "asks for GPUs through DRA claims only (not judged)"};
  }
  const std::vector<size_t>& nodes = b.class_nodes[static_cast<size_t>(shape.cls)];
  std::vector<const LiveNode*> large;
  std::vector<size_t> admitting;
  for (size_t n : nodes) {
    const LiveNode& node = b.input.nodes[b.report.nodes[n].node];
    if (!gpu_requests_fit(shape.requests, node.allocatable)) continue;
    large.push_back(&node);
    if (admits(shape, node)) admitting.push_back(n);
  }
  if (large.empty()) {
    return {PendingReason::kLargerThanAnyNode,
            nodes.empty() ? "the class has no node" : too_big(shape, b, nodes)};
  }
  if (admitting.empty()) return {PendingReason::kTaintsAffinity, refusals(shape, large)};
  std::vector<std::string> fitting;
  for (size_t n : admitting) {
    const LiveNodeReport& node = b.report.nodes[n];
    if (gpu_requests_fit(shape.requests, free_amounts(b.input.nodes[node.node], node)))
      fitting.push_back(b.input.nodes[node.node].name);
  }
  if (!fitting.empty()) {
    std::string detail = "fits " + fitting.front() + " by GPUs, taints and node affinity";
    if (fitting.size() > 1)
      detail += " (and " + plural(static_cast<int64_t>(fitting.size()) - 1, "more node") + ")";
    return {PendingReason::kFits, detail + "; pending for another reason"};
  }
  return by_free(shape, b, admitting);
}

}  // namespace

void judge_pending(Build& b) {
  for (const PendingShape& shape : b.shapes) {
    const Verdict v = judge(shape, b);
    for (size_t p : shape.pods) b.report.pending.push_back({p, shape.cls, v.reason, v.detail});
    if (shape.cls >= 0) {
      b.report.classes[static_cast<size_t>(shape.cls)].pending_pods +=
          static_cast<int64_t>(shape.pods.size());
    }
  }
  std::sort(b.report.pending.begin(), b.report.pending.end(),
            [](const PendingEntry& x, const PendingEntry& y) { return x.pod < y.pod; });
}

}  // namespace gpuadmit::fleet::live_detail

namespace gpuadmit::fleet {

std::string_view reason_text(PendingReason reason) {
  switch (reason) {
    case PendingReason::kNoClass:
      return "no class";
    case PendingReason::kGated:
      return "scheduling gated";
    case PendingReason::kDra:
      return "DRA claims";
    case PendingReason::kLargerThanAnyNode:
      return "larger than any node";
    case PendingReason::kTaintsAffinity:
      return "taints/affinity";
    case PendingReason::kFragmentation:
      return "fragmentation";
    case PendingReason::kClassFull:
      return "class full";
    case PendingReason::kFits:
      return "fits a node";
  }
  return "";
}

std::string_view reason_id(PendingReason reason) {
  switch (reason) {
    case PendingReason::kNoClass:
      return "no_class";
    case PendingReason::kGated:
      return "scheduling_gated";
    case PendingReason::kDra:
      return "dra_claims";
    case PendingReason::kLargerThanAnyNode:
      return "larger_than_any_node";
    case PendingReason::kTaintsAffinity:
      return "taints_affinity";
    case PendingReason::kFragmentation:
      return "fragmentation";
    case PendingReason::kClassFull:
      return "class_full";
    case PendingReason::kFits:
      return "fits_a_node";
  }
  return "";
}

}  // namespace gpuadmit::fleet
