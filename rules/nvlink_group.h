#pragma once
// GPU033: a pod that asks for more whole GPUs than one NVLink group of its class holds
// (`classes.<c>.topology.nvlinkGroup`). The GPUs of a node are joined by NVLink in groups — all
// 8 of an HGX/DGX board through NVSwitch, pairs on PCIe servers with NVLink bridges, none on
// PCIe-only cards — and collective traffic between GPUs of different groups crosses PCIe (and
// the CPUs' interconnect), an order of magnitude slower. A warning by default: the pod runs.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_nvlink_group_rule();

}  // namespace gpuadmit
