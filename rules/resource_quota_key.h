#pragma once
// GPU017 (lint): a ResourceQuota that limits a GPU resource as `nvidia.com/gpu` or
// `limits.nvidia.com/gpu` and not as `requests.nvidia.com/gpu`. The quota controller counts
// extended resources only under the `requests.` prefix (they cannot be overcommitted), so the
// other two forms are accepted by the API server and limit nothing.

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_resource_quota_key_rule();

}  // namespace gpuadmit
