#pragma once
// GPU031 (lint): a Kueue ResourceFlavor whose node labels no class of the policy selects. Kueue
// injects a flavor's `spec.nodeLabels` into the pods of the workloads it admits under it
// (kueue.sigs.k8s.io/docs/concepts/resource_flavor/); gpuadmit gives a GPU pod its class's node
// affinity. A flavor that names a class label (one a class's nodeSelector uses) with values no
// single class allows puts the pods on nodes their class affinity excludes: admitted by Kueue,
// they never schedule.

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_kueue_flavor_rule();

// A flavor's `spec.nodeLabels` select class c's nodes: c's nodeSelector uses at least one of
// them, and every one it uses has a value c allows (GPU031's match; GPU034 maps a ClusterQueue's
// flavors to classes with it).
bool flavor_selects_class(const GpuClass& c, const Json& node_labels);

}  // namespace gpuadmit
