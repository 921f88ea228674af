#pragma once
// How the engine learns what a pod's DRA claims ask for (SPEC §2 "DRA"). A pod names claims by
// reference (`spec.resourceClaims[*].resourceClaimName` / `resourceClaimTemplateName`); the
// objects themselves live elsewhere: lint finds them among the manifests it reads, the webhook
// may look them up through the Kubernetes API (`--dra-lookup`, on in the chart). The engine only
// asks. The webhook's resolver also lists the Pods still waiting for a claim of a given name
// (pending_pods_naming), so that a claim deleted and created again under a pending Pod is seen.
//
//   const ClaimResolver* claims = options.claims;    // may be null: nothing can be resolved
//   ResolvedClaim c = claims->resolve(ClaimKind::kTemplate, "ml", "single-gpu");
//   if (c.status == ClaimLookup::kFound) c.spec["devices"]["requests"] ...

#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"

namespace gpuadmit {

enum class ClaimKind { kClaim, kTemplate };  // ResourceClaim, ResourceClaimTemplate

enum class ClaimLookup {
  kFound,        // `spec` holds the ResourceClaimSpec
  kNotFound,     // the object does not exist (API 404, or not among lint's manifests)
  kUnavailable,  // could not be known: lookup off, API slow/down/forbidden (`error` says which)
};

struct ResolvedClaim {
  ClaimLookup status = ClaimLookup::kUnavailable;
  // The ResourceClaimSpec: a ResourceClaim's `spec`, a ResourceClaimTemplate's `spec.spec`,
  // in the object's own apiVersion shape (v1, v1beta2 or v1beta1); `api_version` names it.
  Json spec;
  std::string api_version;  // "resource.k8s.io/v1", ".../v1beta2", ".../v1beta1"
  std::string error;        // for kNotFound / kUnavailable: a one-line reason for messages
};

// The Pods of a namespace that are not scheduled yet (no `spec.nodeName`, not being deleted) and
// name a ResourceClaim (`resourceClaimName`) or a ResourceClaimTemplate
// (`resourceClaimTemplateName`): the Pods a claim or template created under that name would be
// given, though they were admitted with an earlier one (rules/dra_unresolved_claim.cc, GPU023).
enum class PendingPodsLookup {
  kNotAsked,     // nothing to ask: lint (manifests, not a cluster), the lookup off
  kListed,       // `names` holds every such Pod (none: empty)
  kUnavailable,  // could not be listed: `error` says why
};

struct PendingPods {
  PendingPodsLookup status = PendingPodsLookup::kNotAsked;
  std::vector<std::string> names;  // in the API's order
  std::string error;
};

class ClaimResolver {
 public:
  virtual ~ClaimResolver() = default;
  // Must be thread-safe (the webhook calls it from several threads) and never throw.
  virtual ResolvedClaim resolve(ClaimKind kind, std::string_view ns,
                                std::string_view name) const = 0;
  // The same rules. Not asked unless the resolver reads a cluster.
  virtual PendingPods pending_pods_naming(ClaimKind /*kind*/, std::string_view /*ns*/,
                                          std::string_view /*name*/) const {
    return {};
  }
};

}  // namespace gpuadmit
