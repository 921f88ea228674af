#pragma once
// What the gpu-visibility mutation and GPU024 share: the variable NVIDIA's container runtime
// reads, the values that expose no GPU, and which pod specs are left to see every GPU
// (docs/mutations.md §9, docs/rules.md GPU024).

#include <string_view>

#include "engine/context.h"
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

// Node agents (the device plugin, DCGM exporter, GPU Feature Discovery) run as DaemonSets and
// need every GPU of their node: DaemonSets and Pods whose controller is a DaemonSet are left
// alone, as GPU009 and the strip leave them.
inline bool runs_on_every_node(const PodContext& ctx) {
  return ctx.request != nullptr &&
         (ctx.request->daemonset_owned || ctx.request->kind == "DaemonSet");
}

}  // namespace gpuadmit
