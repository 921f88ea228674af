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

}  // namespace gpuadmit
