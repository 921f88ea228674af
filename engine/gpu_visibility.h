#pragma once
// What the gpu-visibility mutation and GPU024 share: the variable NVIDIA's container runtime
// reads, the values that expose no GPU, and the volume mounts it reads as device requests, paths
// compared as the toolkit compares them (docs/mutations.md §9, docs/rules.md GPU024). Node
// agents, left to see every GPU, are engine/controllers.h runs_on_every_node.

#include <string>
#include <string_view>

#include "engine/clean_path.h"
#include "engine/json.h"

namespace gpuadmit {

inline constexpr std::string_view kVisibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES";
inline constexpr std::string_view kNoVisibleDevices = "void";

// nvidia-container-toolkit internal/config/image/cuda_image.go (devicesFromEnvvars) and
// devices.go (NewVisibleDevices): unset, "" and "void" give no device and no driver; "none" gives
// the driver, no device; "all", indexes, UUIDs and MIG names give those devices. (Unset means
// "all" for a legacy CUDA image — CUDA_VERSION without NVIDIA_REQUIRE_CUDA — which is why the
// mutation writes "void" rather than relying on its absence.) Only the exact spellings pass:
// since v1.12 the toolkit splits on commas and trims, so "void,0" and " void" hide every GPU too,
// but v1.11 and earlier compared the whole value (DevicesFromEnvvars: `*devices == "void"`),
// where they name devices.
inline bool exposes_no_gpu(std::string_view value) {
  return value.empty() || value == "void" || value == "none";
}

// True when an `envFrom` entry with this `prefix` can define NVIDIA_VISIBLE_DEVICES (Kubernetes
// names each key of the ConfigMap or Secret prefix + key): the prefix is "" or a prefix of the
// variable's name.
inline bool env_from_may_set_visible_devices(std::string_view prefix) {
  return kVisibleDevicesEnv.starts_with(prefix);
}

// nvidia-container-toolkit DeviceListAsVolumeMountsRoot: with
// accept-nvidia-visible-devices-as-volume-mounts (the device plugin's volume-mounts strategy) the
// toolkit takes the container paths of mounts under it as device names.
inline constexpr std::string_view kDeviceListMountRoot = "/var/run/nvidia-container-devices";

// The container path of a volumeMount as the toolkit compares it. kubelet makes a relative
// mountPath absolute (pkg/kubelet/kubelet_pods.go makeMounts: MakeAbsolutePath, on Linux
// filepath.Clean("/" + path)) and passes an absolute one as written; containerd puts it into the
// OCI spec's mounts[].destination unchanged; the toolkit cleans it again
// (internal/config/image/cuda_image.go requestsFromMounts: filepath.Clean(m.Destination)).
// Clean being idempotent and "//" being "/", both cases are Clean("/" + mountPath).
inline std::string toolkit_mount_path(std::string_view mount_path) {
  return clean_path("/" + std::string(mount_path));
}

// True when the toolkit reads the mount as a device request. requestsFromMounts (v1.20.0):
//   root := filepath.Clean(DeviceListAsVolumeMountsRoot)
//   destination := filepath.Clean(m.Destination)
//   if !strings.HasPrefix(destination, root) { continue }
//   device := strings.Trim(strings.TrimPrefix(destination, root), "/")
// A plain string prefix, so /var/run/nvidia-container-devicesall names "all" as
// /var/run/nvidia-container-devices/all does; `cdi/<vendor>/<class>/<name>` names a CDI device,
// `imex/<n>` an IMEX channel. There is one root: /run/nvidia-container-devices is not read (a
// string compare; /var/run being a link to /run in the image changes nothing). Stricter than the
// toolkit on one path: the root itself (an empty remainder, no device) matches too.
// The toolkit also requires the mount's host source to be /dev/null, which gpuadmit cannot know
// (containerd resolves symlinks in a hostPath: pkg/cri opts WithMounts, ResolveSymbolicLink), so
// any volume counts.
inline bool names_devices_as_mount(std::string_view mount_path) {
  return toolkit_mount_path(mount_path).starts_with(kDeviceListMountRoot);
}

}  // namespace gpuadmit
