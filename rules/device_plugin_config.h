#pragma once
// GPU028 (lint): the NVIDIA device plugin's config against the classes it serves. The plugin
// decides what a node advertises — each GPU once, or `replicas` times under time-slicing or MPS,
// as nvidia.com/gpu or renamed nvidia.com/gpu.shared, MIG slices as nvidia.com/mig-<profile>
// only under the `mixed` strategy — and the policy's counts (GPU006, GPU012, quota) assume what
// the class says (`timeSlicing`, `mig`). Fields: k8s-device-plugin api/config/v1 (`flags.
// migStrategy`, `sharing.timeSlicing|mps.{renameByDefault, failRequestsGreaterThanOne,
// resources[{name, rename, replicas}]}`).

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_device_plugin_config_rule();

}  // namespace gpuadmit
