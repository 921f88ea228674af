#pragma once
// Packing one class's pods onto its nodes (docs/fleet.md, "Packing"): first-fit decreasing by
// units per pod, a pod never spans nodes. Whole-GPU classes count GPUs, time-sliced classes
// replicas (gpusPerNode × replicas per node), MIG classes each GPU's compute and memory slices.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fleet/model.h"
#include "policies/mig_profiles.h"
#include "policies/model.h"

namespace gpuadmit::fleet {

enum class ClassUnit { kGpu, kReplica, kMigSlice };
std::string_view unit_name(ClassUnit unit);  // "gpu", "replica", "mig-slice"
// "GPU"/"GPUs", "replica"/"replicas", "MIG slice"/"MIG slices" for `n` units.
std::string unit_word(ClassUnit unit, int64_t n);

// What the policy says a class's nodes are.
struct ClassShape {
  ClassUnit unit = ClassUnit::kGpu;
  int64_t nodes = 0;          // 0 when the policy gives none
  int64_t gpus_per_node = 0;  // 0 when the policy gives none
  int64_t replicas = 1;       // time-slicing replicas per GPU
  MigGpuGeometry mig;         // MIG: one GPU's slices
  // Whole GPUs and time-slicing, live mode (docs/fleet.md): each node's own units, when the
  // nodes differ; empty: `nodes` nodes of units_per_node() each.
  std::vector<int64_t> node_units;
  int64_t units_per_gpu() const;
  int64_t units_per_node() const { return gpus_per_node * units_per_gpu(); }
  int64_t node_capacity(size_t node) const {
    return node_units.empty() ? units_per_node() : node_units[node];
  }
};
ClassShape class_shape(const GpuClass& gpu_class);

// One GPU after packing: how much of it is used, by whom, and whether its free part is stranded.
struct GpuCell {
  int64_t used = 0;    // units of units_per_gpu()
  int64_t group = -1;  // index in FleetInput::groups of the group using most of it; -1: free
  bool stranded = false;
};

struct UnplacedPods {
  size_t group = 0;
  int64_t pods = 0;
  Unplaceable reason = Unplaceable::kNone;
};

struct ClassPacking {
  ClassShape shape;
  int64_t requested = 0;  // units of every pod sent to the class
  int64_t placed = 0;
  int64_t stranded = 0;
  int64_t placed_pods = 0;
  std::vector<UnplacedPods> unplaced;            // kLargerThanNode / kClassFull
  std::vector<int64_t> node_used;                // units per node
  std::vector<std::vector<GpuCell>> cells;       // per node, per GPU
  std::vector<std::vector<size_t>> node_groups;  // per node, the groups of its pods (once each)
  std::vector<int64_t> stranded_by_group;  // stranded units blamed on each group (docs/fleet.md)
};

// One group packed with other units and pods (the report's what-if for a pod size).
struct GroupOverride {
  size_t group = SIZE_MAX;
  int64_t units = 0;
  int64_t pods = 0;
};

// Packs `groups` (indices into input.groups, all of this class and not blocked), with
// `override` standing in for one group's size when given.
ClassPacking pack_class(const ClassShape& shape, const FleetInput& input,
                        const std::vector<size_t>& groups, const GroupOverride& override = {});

}  // namespace gpuadmit::fleet
