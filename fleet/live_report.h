#pragma once
// `gpuadmit fleet --live`'s report (docs/fleet.md, "Live mode"): per node and class, the GPUs
// there are (allocatable), used by running pods, free and stranded now; nodes counted apart
// when cordoned, NotReady or tainted; the pending GPU pods with why, judged against every node
// of their class; and a what-if repack of the running pods with the packing code.
//
//   LiveReport report = build_live_report(input, policy);
//   report.classes[0].stranded   // in the class's unit (GPUs, replicas, MIG compute slices)

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/live_model.h"
#include "fleet/live_tenants.h"
#include "fleet/packing.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet {

enum class NodeState { kSchedulable, kCordoned, kNotReady, kTainted };
std::string_view state_name(NodeState state);  // "schedulable", "cordoned", "not ready", "tainted"

// Why a GPU pod is pending, in the order they are decided.
enum class PendingReason {
  kGated,              // spec.schedulingGates: the scheduler does not try it yet
  kNoClass,            // its class is none or not the policy's
  kDra,                // asks for GPUs through DRA claims only: not judged here
  kLargerThanAnyNode,  // some GPU request is more than any node of the class has allocatable
  kTaintsAffinity,     // the nodes large enough refuse it: cordoned, taints, node affinity
  kFragmentation,      // the admitting nodes have enough free in total, none on one node
  kClassFull,          // the admitting nodes do not have enough free even in total
  kFits,               // a node passes all four filters: pending for another reason
};
std::string_view reason_text(PendingReason reason);  // "larger than any node", ...
std::string_view reason_id(PendingReason reason);    // "larger_than_any_node", ... (metrics)

struct LiveNodeReport {
  size_t node = 0;  // index in LiveInput::nodes
  int cls = -1;     // index in LiveReport::classes; -1: no class
  NodeState state = NodeState::kSchedulable;
  std::string taint;     // kTainted: the taint the class's pods do not tolerate
  ResourceAmounts used;  // GPU resources requested by the pods bound to it
  int64_t capacity = 0;  // allocatable, in the class's unit (no class: GPU resources added)
  int64_t used_units = 0;
  int64_t stranded = 0;  // units free that no pending pod and no usual pod fits
  int64_t gpus = 0;      // physical GPUs (the picture's cells)
  int64_t units_per_gpu = 1;
  std::vector<size_t> pods;        // indices in LiveInput::pods bound here, input order
  std::vector<std::string> notes;  // what the labels and allocatable disagree on
  int64_t free() const { return capacity > used_units ? capacity - used_units : 0; }
};

struct RepackReport {
  bool skipped = false;   // the class has more than kMaxRepackGpus GPUs: not repacked
  bool complete = false;  // first-fit decreasing placed every running pod
  int64_t unplaced_pods = 0;
  int64_t stranded = 0;
  int64_t stranded_nodes = 0;
  int64_t empty_nodes = 0;
};

// A class with more GPUs than this (every node's) is not repacked: the packing lays out each GPU.
inline constexpr int64_t kMaxRepackGpus = 10'000'000;

// A priced class's GPUs per hour, in millionths of the policy's currency (fleet/cost.h).
struct ClassCost {
  int64_t per_gpu_hour = 0;  // the class's price
  int64_t used = 0;          // requested by the running pods
  int64_t idle = 0;          // free: on schedulable nodes and on nodes counted apart
  int64_t stranded = 0;      // of idle, stranded now
};

struct LiveClassReport {
  std::string name;
  ClassShape shape;  // unit, replicas, MIG geometry
  int64_t nodes = 0, schedulable = 0, cordoned = 0, not_ready = 0, tainted = 0;
  int64_t total = 0;        // allocatable units of every node of the class
  int64_t used = 0;         // requested by the pods bound to them
  int64_t free = 0;         // on schedulable nodes
  int64_t unavailable = 0;  // free on cordoned, NotReady and tainted nodes
  int64_t stranded = 0, stranded_nodes = 0;
  int64_t empty_nodes = 0;  // schedulable, with GPUs, nothing running
  int64_t running_pods = 0;
  int64_t pending_pods = 0;
  std::vector<PodGpuRequest> usual;  // the most common request of the class's pods
  int64_t usual_units = 0;
  RepackReport repack;
  std::optional<ClassCost> cost;  // classes with a price
};

struct PendingEntry {
  size_t pod = 0;  // index in LiveInput::pods
  int cls = -1;    // index in LiveReport::classes
  PendingReason reason = PendingReason::kNoClass;
  std::string detail;  // "9 nvidia.com/gpu free on 3 nodes, at most 3 on one"
};

struct LiveReport {
  std::vector<LiveClassReport> classes;   // policy order
  std::vector<LiveNodeReport> nodes;      // nodes of a class or with GPUs, input order
  std::vector<PendingEntry> pending;      // input order
  std::vector<size_t> unmatched;          // indices in `nodes`: GPUs but no class
  std::vector<LiveTenantReport> tenants;  // fleet/live_tenants.h
  std::string currency;                   // the classes' prices' ("" when none is priced)
  int64_t running_gpu_pods = 0;
  int64_t pods_on_unknown_nodes = 0;  // bound to a node the input does not hold
};

LiveReport build_live_report(const LiveInput& input, const CompiledPolicy& policy);

// Units of `amount` of `resource` on a node of a class: whole GPUs and time-slice replicas
// count 1 each; on a MIG class an instance counts its compute slices (nvidia.com/gpu: the node's
// single-strategy profile, else a whole GPU).
int64_t units_of(std::string_view resource, int64_t amount, const ClassShape& shape,
                 const GfdLabels& gfd);

// "8 nvidia.com/gpu", "1 nvidia.com/mig-1g.10gb + 2 nvidia.com/mig-2g.20gb".
std::string requests_text(const std::vector<PodGpuRequest>& requests);

}  // namespace gpuadmit::fleet
