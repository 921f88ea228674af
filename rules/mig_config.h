#pragma once
// GPU029 (lint): MIG configurations against the classes' MIG profiles. The GPU Operator's MIG
// manager partitions each node by the mig-parted config its node label `nvidia.com/mig.config`
// names (mig-parted `mig-configs.<name>[].mig-devices`); the device plugin then advertises one
// nvidia.com/mig-<profile> per slice. A profile a class allows that no config creates leaves its
// pods Pending; a slice a class's own configs create that the class does not allow is never
// requested. The GPU Operator's ClusterPolicy sets one MIG strategy for the cluster
// (`spec.mig.strategy`), which every MIG class must share.

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_mig_config_rule();

}  // namespace gpuadmit
