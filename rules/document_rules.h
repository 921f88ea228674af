#pragma once
// lint's document rules, in id order: SPEC §5's GPU016 and GPU017 (LimitRange, ResourceQuota) and
// the GPU stack's configurations against the policy, GPU028–GPU031 and GPU034 (device plugin,
// MIG, scheduler, Kueue's ResourceFlavor and ClusterQueue). Kept apart from rules/all_rules.h:
// those check pod specs for the webhook, these whole objects, for lint only.

#include <memory>
#include <vector>

#include "engine/document_rule.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const DocumentRule>> default_document_rules();

}  // namespace gpuadmit
