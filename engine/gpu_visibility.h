#pragma once
// What the gpu-visibility mutation and GPU024 share: the variable NVIDIA's container runtime
// reads and the values that expose no GPU (docs/mutations.md §9, docs/rules.md GPU024). Node
// agents, left to see every GPU, are engine/controllers.h runs_on_every_node.

#include <string_view>

#include "engine/json.h"

namespace gpuadmit {

inline constexpr std::string_view kVisibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES";
inline constexpr std::string_view kNoVisibleDevices = "void";

// nvidia-container-toolkit internal/config/image/cuda_image.go (VisibleDevicesFromEnvVar):
// unset, "" and "void" give no device and no driver; "none" gives the driver, no device.
// (Unset means "all" for a legacy CUDA image — CUDA_VERSION without NVIDIA_REQUIRE_CUDA — which
// is why the mutation writes "void" rather than relying on its absence.)
inline bool exposes_no_gpu(std::string_view value) {
  return value.empty() || value == "void" || value == "none";
}

}  // namespace gpuadmit
