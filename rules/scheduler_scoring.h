#pragma once
// GPU030 (lint): a KubeSchedulerConfiguration (a document, or a ConfigMap value) whose
// NodeResourcesFit plugin scores a GPU resource with LeastAllocated. LeastAllocated prefers the
// node with the most free capacity, so one-GPU pods spread across the GPU nodes and no node keeps
// enough free GPUs for a multi-GPU pod; MostAllocated and RequestedToCapacityRatio pack them
// (kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/).

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_scheduler_scoring_rule();

}  // namespace gpuadmit
