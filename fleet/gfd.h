#pragma once
// The node labels NVIDIA's GPU Feature Discovery (GFD, part of NVIDIA/k8s-device-plugin) and the
// GPU Operator's MIG Manager write, read once per node for `gpuadmit fleet --live`
// (docs/fleet.md, "Live mode"). The one place that names these labels.
//
//   GfdLabels gfd = read_gfd_labels(node_labels);
//   gfd.replicas   // 4 on a node time-sliced 4 ways
//
// Sources: k8s-device-plugin docs/gpu-feature-discovery/README.md ("Generated Labels") and
// README.md ("Catalog of Labels"); the label values as internal/lm/resource.go baseLabeler writes
// them; the MIG Manager's labels from the GPU Operator's "GPU Operator with MIG" guide.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuadmit::fleet {

using NodeLabels = std::vector<std::pair<std::string, std::string>>;

// nvidia.com/gpu.product: the GPU model ("NVIDIA-A100-SXM4-80GB"). With MIG strategy single GFD
// appends "-MIG-<profile>" ("A100-SXM4-40GB-MIG-1g.5gb"), and with time-slicing or MPS without
// renameByDefault "-SHARED" (README "Catalog of Labels"; resource.go getProductName).
inline constexpr std::string_view kProductLabel = "nvidia.com/gpu.product";
// nvidia.com/gpu.count: physical GPUs; with MIG strategy single, overridden to the number of MIG
// devices (gpu-feature-discovery README, "MIG 'single' strategy").
inline constexpr std::string_view kCountLabel = "nvidia.com/gpu.count";
// nvidia.com/gpu.replicas: the time-slicing/MPS replicas of each GPU (baseLabeler: the config's
// `replicas`, 1 when the resource is not shared, 0 when sharing is off — MIG-enabled GPUs).
inline constexpr std::string_view kReplicasLabel = "nvidia.com/gpu.replicas";
// nvidia.com/gpu.sharing-strategy: none | time-slicing | mps (README "Catalog of Labels").
inline constexpr std::string_view kSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";
// nvidia.com/mig.strategy: single | mixed (GFD README, both MIG tables).
inline constexpr std::string_view kMigStrategyLabel = "nvidia.com/mig.strategy";
// nvidia.com/mig.config: the mig-parted configuration the MIG Manager is asked to apply
// ("all-1g.10gb", "all-balanced"); nvidia.com/mig.config.state: success | pending | rebooting |
// failed while it applies it (GPU Operator, "GPU Operator with MIG").
inline constexpr std::string_view kMigConfigLabel = "nvidia.com/mig.config";
inline constexpr std::string_view kMigConfigStateLabel = "nvidia.com/mig.config.state";

struct GfdLabels {
  std::string product;              // "" when GFD did not label the node
  std::optional<int64_t> count;     // nullopt when absent or not a number
  std::optional<int64_t> replicas;  // idem
  std::string sharing_strategy;     // "" when absent
  std::string mig_strategy;         // "" when absent
  std::string mig_config;           // ""
  std::string mig_config_state;     // ""
  bool present() const { return !product.empty() || count.has_value(); }
  // With MIG strategy single: the profile in the product label ("1g.5gb" of
  // "A100-SXM4-40GB-MIG-1g.5gb[-SHARED]"), the device plugin's "1g.10gb.me" written "1g.10gb+me";
  // "" otherwise.
  std::string mig_single_profile() const;
};

GfdLabels read_gfd_labels(const NodeLabels& labels);

// The MIG profile a device plugin resource names: nvidia.com/mig-1g.10gb → "1g.10gb", and
// nvidia.com/mig-1g.10gb.me → "1g.10gb+me" (the plugin writes "+" as "."; docs/mutations.md);
// "" for any other resource.
std::string mig_profile_of_resource(std::string_view resource);

// The value of `key` among `labels`, nullptr when absent.
const std::string* find_label(const NodeLabels& labels, std::string_view key);

}  // namespace gpuadmit::fleet
