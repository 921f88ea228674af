#pragma once
// `gpuadmit fleet --live`'s input (docs/fleet.md, "Live mode"): the cluster's Nodes and GPU Pods
// as they are, read from an export or the API, reduced to what the report needs.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "engine/resources.h"
#include "fleet/gfd.h"
#include "policies/model.h"

namespace gpuadmit::fleet {

// Amounts of GPU resources by name, in first-seen order ("nvidia.com/gpu" 8).
struct ResourceAmount {
  std::string resource;
  int64_t amount = 0;
};
using ResourceAmounts = std::vector<ResourceAmount>;
int64_t amount_of(const ResourceAmounts& amounts, std::string_view resource);
void add_amount(ResourceAmounts& amounts, std::string_view resource, int64_t amount);

// A GPU device a DRA driver publishes in a ResourceSlice, or one a ResourceClaim was allocated.
struct DraDevice {
  std::string driver;
  std::string pool;
  std::string device;
};

struct LiveNode {
  std::string name;
  uint32_t file = 0;  // index in LiveInput::files
  int line = 0;
  NodeLabels labels;
  std::vector<Taint> taints;   // spec.taints
  bool unschedulable = false;  // spec.unschedulable (cordoned)
  bool ready = false;          // the Ready condition is True
  GfdLabels gfd;
  // status.allocatable's GPU resources (CompiledPolicy::is_gpu_resource), zero amounts kept.
  ResourceAmounts allocatable;
  // DRA: GPU devices of the node's ResourceSlices (spec.nodeName), and how many are allocated.
  int64_t dra_devices = 0;
  int64_t dra_allocated = 0;
};

struct LivePod {
  std::string ns;
  std::string name;
  std::string owner;  // "ReplicaSet/train-7f9c" (the controller ownerReference), "" when none
  uint32_t file = 0;
  int line = 0;
  std::string node_name;  // spec.nodeName; "" while pending
  // Per GPU resource, the pod's effective request as the scheduler counts it (the engine's
  // effective_pod_gpu_requests), positive amounts only.
  std::vector<PodGpuRequest> requests;
  bool dra = false;  // spec.resourceClaims is not empty

  // Pending pods only.
  Json placement;          // {nodeSelector, affinity, tolerations} of the spec, as written
  std::string class_name;  // the class the webhook resolves (engine/context.h); "" when none
  bool class_known = false;
  std::vector<std::string> scheduling_gates;
  std::string scheduler_message;  // the PodScheduled=False condition's message
  std::string nominated_node;     // status.nominatedNodeName

  std::string label() const;  // "ns/name"
};

struct LiveInput {
  std::vector<std::string> files;        // "<stdin>", a path, or "the API server"
  std::vector<LiveNode> nodes;           // every Node, input order
  std::vector<LivePod> pods;             // GPU pods that are not terminal, input order
  std::vector<DraDevice> dra_devices;    // GPU devices of ResourceSlices
  std::vector<DraDevice> dra_allocated;  // devices of allocated ResourceClaims
  int64_t pods_read = 0;                 // every Pod object read
  int64_t terminal_pods = 0;             // Succeeded or Failed: hold nothing
  int64_t replaced = 0;  // objects read again under the same name (the later one kept)
};

}  // namespace gpuadmit::fleet
