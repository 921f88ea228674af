#include "fleet/packing.h"

#include <algorithm>
#include <limits>

namespace gpuadmit::fleet {
namespace {

// Max of the nodes' free units over a segment tree, for first fit in O(log nodes): the
// leftmost node with at least `size` free.
class FreeTree {
 public:
  explicit FreeTree(const ClassShape& shape) : size_(1) {
    const size_t n = static_cast<size_t>(shape.nodes);
    while (size_ < n) size_ *= 2;
    tree_.assign(2 * size_, -1);
    for (size_t i = 0; i < n; ++i) tree_[size_ + i] = shape.node_capacity(i);
    for (size_t i = size_ - 1; i >= 1; --i) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  // The leftmost node with free >= size, or -1.
  int64_t first_fit(int64_t size) const {
    if (tree_.size() < 2 || tree_[1] < size) return -1;
    size_t i = 1;
    while (i < size_) i = tree_[2 * i] >= size ? 2 * i : 2 * i + 1;
    return static_cast<int64_t>(i - size_);
  }
  int64_t free(size_t node) const { return tree_[size_ + node]; }
  void set(size_t node, int64_t value) {
    size_t i = size_ + node;
    tree_[i] = value;
    for (i /= 2; i >= 1; i /= 2) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }

 private:
  size_t size_;
  std::vector<int64_t> tree_;
};

// Each group's units per pod and pods, one of them possibly overridden.
struct Sizes {
  const FleetInput& input;
  const GroupOverride& override;
  int64_t units(size_t g) const {
    return g == override.group ? override.units : input.groups[g].units;
  }
  int64_t pods(size_t g) const {
    return g == override.group ? override.pods : input.groups[g].pods;
  }
};

// Groups by units per pod, largest first; input order among equals.
std::vector<size_t> decreasing(const Sizes& sizes, std::vector<size_t> groups) {
  std::stable_sort(groups.begin(), groups.end(),
                   [&](size_t a, size_t b) { return sizes.units(a) > sizes.units(b); });
  return groups;
}

void add_unique(std::vector<size_t>& v, size_t x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// Whole GPUs and time-slice replicas: every node is `units_per_node` interchangeable units.
void pack_units(const Sizes& sizes, const std::vector<size_t>& order, ClassPacking& out) {
  const ClassShape& shape = out.shape;
  const size_t nodes = static_cast<size_t>(shape.nodes);
  int64_t capacity = shape.units_per_node();  // of the largest node
  if (!shape.node_units.empty()) {
    capacity = *std::max_element(shape.node_units.begin(), shape.node_units.end());
  }
  FreeTree tree(shape);
  // Per node, its pods' groups and units in placement order (consecutive pods merged).
  std::vector<std::vector<std::pair<size_t, int64_t>>> parts(nodes);
  for (size_t g : order) {
    const int64_t units = sizes.units(g);
    if (units > capacity) {
      out.unplaced.push_back({g, sizes.pods(g), Unplaceable::kLargerThanNode});
      continue;
    }
    int64_t left = sizes.pods(g);
    while (left > 0) {
      const int64_t node = tree.first_fit(units);
      if (node < 0) break;
      const int64_t free = tree.free(static_cast<size_t>(node));
      const int64_t n = std::min(left, free / units);
      tree.set(static_cast<size_t>(node), free - n * units);
      auto& p = parts[static_cast<size_t>(node)];
      if (!p.empty() && p.back().first == g) {
        p.back().second += n * units;
      } else {
        p.emplace_back(g, n * units);
      }
      left -= n;
      out.placed_pods += n;
      out.placed = saturating_add(out.placed, n * units);
    }
    if (left > 0) out.unplaced.push_back({g, left, Unplaceable::kClassFull});
  }
  // Cells: GPU i of a node holds units [i × per_gpu, (i + 1) × per_gpu) in placement order.
  const int64_t per_gpu = shape.units_per_gpu();
  for (size_t n = 0; n < nodes; ++n) {
    out.node_used[n] = shape.node_capacity(n) - tree.free(n);
    std::vector<GpuCell>& cells = out.cells[n];
    std::vector<int64_t> best(cells.size(), 0);
    int64_t at = 0;
    for (const auto& [g, units] : parts[n]) {
      add_unique(out.node_groups[n], g);
      for (int64_t u = at; u < at + units;) {
        const size_t cell = static_cast<size_t>(u / per_gpu);
        const int64_t take = std::min(at + units, (u / per_gpu + 1) * per_gpu) - u;
        cells[cell].used += take;
        if (take > best[cell]) {
          best[cell] = take;
          cells[cell].group = static_cast<int64_t>(g);
        }
        u += take;
      }
      at += units;
    }
  }
}

// The smallest request a stranded unit would have to fit: of the pods left over for lack of
// room when there are any, else of every pod of the class.
int64_t reference_size(const Sizes& sizes, const std::vector<size_t>& order,
                       const ClassPacking& out) {
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (const UnplacedPods& u : out.unplaced) {
    if (u.reason == Unplaceable::kClassFull) smallest = std::min(smallest, sizes.units(u.group));
  }
  if (smallest != std::numeric_limits<int64_t>::max()) return smallest;
  for (size_t g : order) {
    if (sizes.pods(g) > 0) smallest = std::min(smallest, sizes.units(g));
  }
  return smallest;
}

// The group with most units on a node.
int64_t main_group(const std::vector<GpuCell>& cells) {
  std::vector<std::pair<int64_t, int64_t>> tally;  // group, units
  for (const GpuCell& c : cells) {
    if (c.group < 0) continue;
    auto it = std::find_if(tally.begin(), tally.end(), [&](auto& t) { return t.first == c.group; });
    if (it == tally.end()) {
      tally.emplace_back(c.group, c.used);
    } else {
      it->second += c.used;
    }
  }
  int64_t best = -1, best_units = 0;
  for (const auto& [g, units] : tally) {
    if (units > best_units) {
      best = g;
      best_units = units;
    }
  }
  return best;
}

void mark_stranded_units(const Sizes& sizes, const std::vector<size_t>& order, ClassPacking& out) {
  const int64_t reference = reference_size(sizes, order, out);
  const int64_t per_gpu = out.shape.units_per_gpu();
  for (size_t n = 0; n < out.node_used.size(); ++n) {
    const int64_t free = out.shape.node_capacity(n) - out.node_used[n];
    if (out.node_used[n] == 0 || free == 0 || free >= reference) continue;
    out.stranded += free;
    for (GpuCell& c : out.cells[n]) c.stranded = c.used < per_gpu;
    const int64_t blamed = main_group(out.cells[n]);
    if (blamed >= 0) out.stranded_by_group[static_cast<size_t>(blamed)] += free;
  }
}

// MIG: one pod's instances as slices, largest first.
std::vector<MigSlice> pod_slices(const PodGroup& group, const MigGpuGeometry& geometry) {
  std::vector<MigSlice> slices;
  for (const auto& [profile, count] : group.mig) {
    const MigSlice s = mig_slice(profile, geometry);
    for (int64_t i = 0; i < count && i < 1024; ++i) slices.push_back(s);
  }
  std::sort(slices.begin(), slices.end(), [](const MigSlice& a, const MigSlice& b) {
    return a.compute != b.compute ? a.compute > b.compute : a.memory > b.memory;
  });
  return slices;
}

struct MigGpu {
  int compute = 0;  // used
  int memory = 0;
  std::vector<std::pair<size_t, int>> parts;  // group, compute
};

// Places a pod's slices first-fit on a node's GPUs; false (node unchanged) when they do not fit.
bool place_on_node(std::vector<MigGpu>& gpus, const std::vector<MigSlice>& slices, size_t group,
                   const MigGpuGeometry& geometry) {
  std::vector<MigGpu> trial = gpus;
  for (const MigSlice& s : slices) {
    auto gpu = std::find_if(trial.begin(), trial.end(), [&](const MigGpu& g) {
      return g.compute + s.compute <= geometry.compute_slices &&
             g.memory + s.memory <= geometry.memory_slices;
    });
    if (gpu == trial.end()) return false;
    gpu->compute += s.compute;
    gpu->memory += s.memory;
    if (!gpu->parts.empty() && gpu->parts.back().first == group) {
      gpu->parts.back().second += s.compute;
    } else {
      gpu->parts.emplace_back(group, s.compute);
    }
  }
  gpus = std::move(trial);
  return true;
}

// The packed GPUs into the class's cells: each GPU's used compute slices, the group holding most
// of it, and stranded when its free slices fit none of `reference` (the slices of the pods left
// over, else of every pod).
void record_mig_cells(const std::vector<std::vector<MigGpu>>& state,
                      const std::vector<MigSlice>& reference, const MigGpuGeometry& geometry,
                      ClassPacking& out) {
  for (size_t n = 0; n < state.size(); ++n) {
    for (size_t i = 0; i < state[n].size(); ++i) {
      const MigGpu& gpu = state[n][i];
      GpuCell& cell = out.cells[n][i];
      cell.used = gpu.compute;
      out.node_used[n] += gpu.compute;
      int best = 0;
      for (const auto& [g, compute] : gpu.parts) {
        add_unique(out.node_groups[n], g);
        if (compute > best) {
          best = compute;
          cell.group = static_cast<int64_t>(g);
        }
      }
      const int free_compute = geometry.compute_slices - gpu.compute;
      const int free_memory = geometry.memory_slices - gpu.memory;
      if (gpu.compute == 0 || free_compute == 0) continue;
      const bool fits = std::any_of(reference.begin(), reference.end(), [&](const MigSlice& s) {
        return s.compute <= free_compute && s.memory <= free_memory;
      });
      if (fits) continue;
      cell.stranded = true;
      out.stranded += free_compute;
      out.stranded_by_group[static_cast<size_t>(cell.group)] += free_compute;
    }
  }
}

void pack_mig(const FleetInput& input, const std::vector<size_t>& order, ClassPacking& out) {
  const ClassShape& shape = out.shape;
  const MigGpuGeometry& geometry = shape.mig;
  const size_t nodes = static_cast<size_t>(shape.nodes);
  std::vector<std::vector<MigGpu>> state(
      nodes, std::vector<MigGpu>(static_cast<size_t>(shape.gpus_per_node)));
  std::vector<MigSlice> left_over;  // slices of class-full pods, for stranding
  for (size_t g : order) {
    const PodGroup& group = input.groups[g];
    const std::vector<MigSlice> slices = pod_slices(group, geometry);
    std::vector<MigGpu> empty(static_cast<size_t>(shape.gpus_per_node));
    if (!place_on_node(empty, slices, g, geometry)) {
      out.unplaced.push_back({g, group.pods, Unplaceable::kLargerThanNode});
      continue;
    }
    int64_t left = group.pods;
    size_t node = 0;  // a node that refused a pod of this group refuses the next ones too
    while (left > 0 && node < nodes) {
      if (!place_on_node(state[node], slices, g, geometry)) {
        ++node;
        continue;
      }
      --left;
      ++out.placed_pods;
      out.placed = saturating_add(out.placed, group.units);
    }
    if (left > 0) {
      out.unplaced.push_back({g, left, Unplaceable::kClassFull});
      left_over.insert(left_over.end(), slices.begin(), slices.end());
    }
  }
  std::vector<MigSlice> reference = left_over;
  if (reference.empty()) {
    for (size_t g : order) {
      const auto s = pod_slices(input.groups[g], geometry);
      reference.insert(reference.end(), s.begin(), s.end());
    }
  }
  record_mig_cells(state, reference, geometry, out);
}

}  // namespace

std::string_view unit_name(ClassUnit unit) {
  switch (unit) {
    case ClassUnit::kGpu:
      return "gpu";
    case ClassUnit::kReplica:
      return "replica";
    case ClassUnit::kMigSlice:
      return "mig-slice";
  }
  return "gpu";
}

std::string unit_word(ClassUnit unit, int64_t n) {
  std::string word = unit == ClassUnit::kGpu       ? "GPU"
                     : unit == ClassUnit::kReplica ? "replica"
                                                   : "MIG slice";
  return n == 1 ? word : word + "s";
}

int64_t ClassShape::units_per_gpu() const {
  switch (unit) {
    case ClassUnit::kGpu:
      return 1;
    case ClassUnit::kReplica:
      return replicas;
    case ClassUnit::kMigSlice:
      return mig.compute_slices;
  }
  return 1;
}

ClassShape class_shape(const GpuClass& gpu_class) {
  ClassShape shape;
  shape.nodes = std::max<int64_t>(0, gpu_class.nodes.value_or(0));
  shape.gpus_per_node = std::max<int64_t>(0, gpu_class.gpus_per_node.value_or(0));
  if (gpu_class.mig) {
    shape.unit = ClassUnit::kMigSlice;
    std::optional<std::vector<std::string_view>> profiles;
    for (const auto& [label, values] : gpu_class.node_selector) {
      if (label != "nvidia.com/gpu.product") continue;
      for (const std::string& v : values) {
        if (!profiles) profiles = mig_profiles_for_product(v);
      }
    }
    if (!profiles) {
      profiles.emplace(gpu_class.mig->profiles.begin(), gpu_class.mig->profiles.end());
    }
    shape.mig = mig_gpu_geometry(*profiles);
  } else if (gpu_class.time_slicing && gpu_class.time_slicing->replicas > 1) {
    shape.unit = ClassUnit::kReplica;
    shape.replicas = gpu_class.time_slicing->replicas;
  }
  return shape;
}

ClassPacking pack_class(const ClassShape& shape, const FleetInput& input,
                        const std::vector<size_t>& groups, const GroupOverride& override) {
  ClassPacking out;
  out.shape = shape;
  const Sizes sizes{input, override};
  const std::vector<size_t> order = decreasing(sizes, groups);
  for (size_t g : order)
    out.requested = saturating_add(out.requested, saturating_mul(sizes.pods(g), sizes.units(g)));
  const size_t nodes = static_cast<size_t>(shape.nodes);
  out.node_used.assign(nodes, 0);
  out.cells.assign(nodes, {});
  for (size_t n = 0; n < nodes; ++n) {
    const int64_t per_gpu = std::max<int64_t>(shape.units_per_gpu(), 1);
    const int64_t gpus = shape.node_units.empty() ? shape.gpus_per_node
                                                  : (shape.node_units[n] + per_gpu - 1) / per_gpu;
    out.cells[n].resize(static_cast<size_t>(gpus));
  }
  out.node_groups.assign(nodes, {});
  out.stranded_by_group.assign(input.groups.size(), 0);
  if (shape.unit == ClassUnit::kMigSlice) {
    pack_mig(input, order, out);
  } else {
    pack_units(sizes, order, out);
    mark_stranded_units(sizes, order, out);
  }
  return out;
}

}  // namespace gpuadmit::fleet
