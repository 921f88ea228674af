// lint/manifest_claims.h: claim objects among manifests, resolved by kind, namespace and name.

#include <catch2/catch.hpp>

#include <string>

#include "lint/manifest_claims.h"

namespace gpuadmit::lint {
namespace {

constexpr std::string_view kManifests = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: team-a}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: gpu}
spec:
  devices:
    requests: [{name: g, deviceClassName: l4.example.com}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: team-a}
spec:
  spec: {devices: {requests: [{name: second, exactly: {deviceClassName: other}}]}}
---
apiVersion: v1
kind: List
items:
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: listed, namespace: team-b}
    spec: {devices: {requests: []}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {generateName: nameless-}
    spec: {devices: {requests: []}}
---
apiVersion: example.com/v1
kind: ResourceClaim
metadata: {name: not-dra, namespace: team-a}
spec: {}
---
kind: ResourceClaim
metadata: [broken
)";

TEST_CASE("manifest claims: resolved by kind, namespace and name", "[lint][dra]") {
  ManifestClaims claims("lint-ns");
  claims.add_text(kManifests, false);
  CHECK(claims.size() == 3);

  const ResolvedClaim t = claims.resolve(ClaimKind::kTemplate, "team-a", "gpu");
  REQUIRE(t.status == ClaimLookup::kFound);
  CHECK(t.api_version == "resource.k8s.io/v1");
  // The template's spec.spec, and the first of two with one name.
  CHECK(t.spec["devices"]["requests"][0]["name"] == "g");

  // No namespace: lint's --namespace.
  const ResolvedClaim c = claims.resolve(ClaimKind::kClaim, "lint-ns", "gpu");
  REQUIRE(c.status == ClaimLookup::kFound);
  CHECK(c.api_version == "resource.k8s.io/v1beta1");
  CHECK(c.spec["devices"]["requests"][0]["deviceClassName"] == "l4.example.com");

  CHECK(claims.resolve(ClaimKind::kClaim, "team-b", "listed").status == ClaimLookup::kFound);
  // Another kind, namespace, or group is not a match.
  CHECK(claims.resolve(ClaimKind::kClaim, "team-a", "gpu").status == ClaimLookup::kNotFound);
  CHECK(claims.resolve(ClaimKind::kTemplate, "team-b", "gpu").status == ClaimLookup::kNotFound);
  const ResolvedClaim missing = claims.resolve(ClaimKind::kClaim, "team-a", "not-dra");
  CHECK(missing.status == ClaimLookup::kNotFound);
  CHECK(missing.error == "not among the manifests read");
}

TEST_CASE("manifest claims: a missing file is reported, not thrown", "[lint][dra]") {
  ManifestClaims claims("default");
  CHECK_FALSE(claims.add_file("/nonexistent/claims.yaml"));
  CHECK(claims.size() == 0);
}

}  // namespace
}  // namespace gpuadmit::lint
