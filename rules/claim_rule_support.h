#pragma once
// Helpers shared by the DRA claim rules (GPU018–GPU022): how a claim's request is named in
// messages and which of its requests are GPU requests under the policy (docs/dra.md).
//
//   for_each_gpu_request(ctx, [&](const DraRequest& r, const GpuClass& c,
//                                 const DeviceClassMapping& m) { ... request_label(ctx, r) ... });

#include <string>

#include "engine/context.h"
#include "engine/dra.h"

namespace gpuadmit::claim_rules {

// "ResourceClaimTemplate request gpu (DeviceClass gpu.nvidia.com)"
inline std::string request_label(const ClaimContext& ctx, const DraRequest& r) {
  return std::string(ctx.kind) + " request " + r.name + " (DeviceClass " + r.device_class + ")";
}

// Calls each(request, class, mapping) for every request whose DeviceClass a class maps.
template <typename F>
void for_each_gpu_request(const ClaimContext& ctx, F each) {
  if (ctx.requests == nullptr) return;
  for (const DraRequest& r : *ctx.requests) {
    const auto match = ctx.policy->find_device_class(r.device_class);
    if (match.gpu_class != nullptr) each(r, *match.gpu_class, *match.mapping);
  }
}

inline std::string tenant_text(const ClaimContext& ctx) {
  return ctx.tenant != nullptr ? "tenant " + ctx.tenant->name
                               : "namespace " + std::string(ctx.ns) + " (no tenant)";
}

}  // namespace gpuadmit::claim_rules
