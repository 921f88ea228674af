#pragma once
// Internal to fleet/live_*.cc: what the live report's steps share while it is built.

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/live_model.h"
#include "fleet/live_report.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet::live_detail {

// Pending pods with the same requests and placement, judged once.
struct PendingShape {
  std::vector<PodGpuRequest> requests;
  const Json* placement = nullptr;  // of the first pod of the shape
  int cls = -1;                     // the pods' class; -1 when none is known
  std::vector<size_t> pods;         // indices in LiveInput::pods
};

struct Build {
  const LiveInput& input;
  const CompiledPolicy& policy;
  LiveReport& report;
  std::vector<std::vector<size_t>> class_nodes;  // per class: indices in report.nodes
  std::vector<PendingShape> shapes;              // pending pods with GPU requests
};

// Free GPU resources of a node: allocatable − requested, per resource (never below 0).
ResourceAmounts free_amounts(const LiveNode& node, const LiveNodeReport& r);

// The scheduler's filters but resources (node_fit.h) for a pending shape on a node.
bool admits(const PendingShape& shape, const LiveNode& node);

// Fills report.pending, one entry per pending GPU pod, and each class's pending_pods.
void judge_pending(Build& build);

// Fills each class's repack (live_repack.cc).
void repack_classes(Build& build);

}  // namespace gpuadmit::fleet::live_detail
