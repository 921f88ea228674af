#pragma once
// The webhook's optional lookup of ResourceClaimTemplates and ResourceClaims through the
// Kubernetes API (`gpuadmit serve --dra-lookup`, docs/dra.md "API lookup"): read-only GETs with
// the pod's service account token, the cluster CA, a short timeout, a deadline for all the
// lookups of one review, and a bounded TTL cache.
//
//   auto config = KubeClaimResolverConfig::in_cluster();   // or an error string
//   KubeClaimResolver claims(std::get<KubeClaimResolverConfig>(config));
//   auto review = claims.for_review();                      // per review: one deadline
//   options.claims = review.get();                          // EvaluateOptions
//
// Results (engine/claim_resolver.h):
//  - kFound: the API answered 200 with the object; `spec` is the ResourceClaimSpec.
//  - kNotFound: 404 with a `Status` of reason NotFound, or a name no object can have.
//  - kUnavailable: anything else, `error` says what — timeout, connection or TLS failure, 401,
//    403, 429, 5xx, a malformed answer, resource.k8s.io not served, the review's lookup deadline
//    passed. The engine then treats the pod as a possible GPU pod, never as a non-GPU one.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "engine/claim_resolver.h"
#include "kube/in_cluster.h"

namespace gpuadmit::kube {

struct KubeClaimResolverConfig {
  static constexpr const char* kServiceAccountDir = InClusterAccess::kServiceAccountDir;

  std::string host;  // KUBERNETES_SERVICE_HOST
  int port = 443;    // KUBERNETES_SERVICE_PORT
  // Read before every request that goes to the API: projected service account tokens are
  // rotated by the kubelet (about hourly), so a token read once at start expires.
  std::string token_path = std::string(kServiceAccountDir) + "/token";
  std::string ca_path = std::string(kServiceAccountDir) + "/ca.crt";
  std::chrono::milliseconds timeout{500};  // per connect/read/write (kube/api_client.h)
  // All the lookups of one review together (`--dra-lookup-deadline`): once it has passed, a
  // reference not in the cache is unavailable without a request, and each request is given at
  // most what is left. Well below the webhook's timeoutSeconds (2 s for /mutate in the chart
  // and in `render`), so a pod naming several uncached claims is still answered in time.
  std::chrono::milliseconds review_deadline{1000};

  // Cache: at most `cache_size` names, least recently used evicted first. Claim and template
  // specs are immutable (resource.k8s.io validation), so a found entry only goes stale when the
  // object is deleted and created again under the same name — which a tenant can do on purpose:
  // the replica that admits the new CREATE forgets the name (pending_pods_naming), another
  // replica would count a new Pod with the old, smaller spec for as long as it kept it. So found
  // entries are not kept (0); a Pod's claims are read at its admission, one GET each.
  std::size_t cache_size = 4096;
  std::chrono::milliseconds found_ttl{0};
  std::chrono::milliseconds not_found_ttl{std::chrono::seconds(5)};
  // A failed lookup is remembered briefly, so a down API server costs one timeout per name per
  // interval, not one per pod.
  std::chrono::milliseconds unavailable_ttl{std::chrono::seconds(1)};

  std::function<std::chrono::steady_clock::time_point()> now;  // tests; empty: steady_clock

  // host/port from KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT (InClusterAccess); an error
  // (one line) when not running in a pod.
  static std::variant<KubeClaimResolverConfig, std::string> in_cluster();
};

// Lookups by result, a closed set: found, not_found and unavailable are answers from the API
// (or failures to get one); cache_hit is every lookup answered from the cache; deadline is every
// lookup not made because its review's deadline had passed.
struct ClaimLookupCounts {
  std::uint64_t found = 0, not_found = 0, unavailable = 0, cache_hit = 0, deadline = 0;
};

class KubeClaimResolver final : public ClaimResolver {
 public:
  explicit KubeClaimResolver(KubeClaimResolverConfig config);
  ~KubeClaimResolver() override;

  // One lookup, within a deadline of its own (review_deadline from now).
  ResolvedClaim resolve(ClaimKind kind, std::string_view ns, std::string_view name) const override;
  // The lookups of one review: a resolver whose lookups share one deadline, review_deadline
  // from now. It refers to this resolver, which must outlive it.
  std::unique_ptr<const ClaimResolver> for_review() const;
  ResolvedClaim resolve_until(ClaimKind kind, std::string_view ns, std::string_view name,
                              std::chrono::steady_clock::time_point deadline) const;

  // The Pods of `ns` not scheduled yet that name the claim or template (engine/claim_resolver.h):
  // GET /api/v1/namespaces/<ns>/pods?fieldSelector=spec.nodeName= page by page (kube/list.h),
  // within a deadline of its own, or the review's. Asked at the CREATE of a claim or template of
  // that name, so the cache forgets what it held under the name. Needs `list` on pods.
  PendingPods pending_pods_naming(ClaimKind kind, std::string_view ns,
                                  std::string_view name) const override;
  PendingPods pending_pods_naming_until(ClaimKind kind, std::string_view ns, std::string_view name,
                                        std::chrono::steady_clock::time_point deadline) const;

  ClaimLookupCounts counts() const;
  std::size_t cache_entries() const;
  // gpuadmit_dra_lookups_total{result=...} in the Prometheus text format.
  void render_metrics(std::string& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuadmit::kube
