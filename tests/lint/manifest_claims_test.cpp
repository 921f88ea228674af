// lint/manifest_claims.h: claim objects among manifests, resolved by kind, namespace and name.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lint/manifest_claims.h"

namespace gpuadmit::lint {
namespace manifest_claims_test {
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

TEST_CASE("manifest claims: files read on 4 threads keep what one thread keeps", "[lint][dra]") {
  // Ten files, each a template "gpu" in team-a with a request named after the file, and a claim
  // of its own: the first file's template wins, as it would read one after the other.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpuadmit-claims-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (int i = 0; i < 10; ++i) {
    const std::string n = std::to_string(i);
    paths.push_back((dir / ("m" + n + ".yaml")).string());
    std::ofstream(paths.back())
        << "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
           "metadata: {name: gpu, namespace: team-a}\nspec:\n  spec: {devices: {requests: "
           "[{name: r"
        << n
        << ", exactly: {deviceClassName: gpu.nvidia.com}}]}}\n---\napiVersion: "
           "resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c"
        << n << "}\nspec: {devices: {requests: []}}\n";
  }
  paths.push_back((dir / "missing.yaml").string());  // cannot be opened: skipped
  ManifestClaims one("lint-ns"), four("lint-ns");
  one.add_files(paths, 1);
  four.add_files(paths, 4);
  CHECK(one.size() == 11);
  CHECK(four.size() == 11);
  for (ManifestClaims* claims : {&one, &four}) {
    const ResolvedClaim t = claims->resolve(ClaimKind::kTemplate, "team-a", "gpu");
    REQUIRE(t.status == ClaimLookup::kFound);
    CHECK(t.spec["devices"]["requests"][0]["name"] == "r0");
    CHECK(claims->resolve(ClaimKind::kClaim, "lint-ns", "c9").status == ClaimLookup::kFound);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("manifest claims: the word is found across the scan's 64 KiB blocks", "[lint][dra]") {
  // A claim whose kind straddles the first block's end (offset 65,536), after a long comment;
  // and a file that never mentions claims, which holds nothing.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpuadmit-scan-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string head = "apiVersion: resource.k8s.io/v1\nkind: ";
  for (const size_t cut : {size_t{1}, size_t{6}, size_t{12}}) {
    std::string padding = "# " + std::string(65536 - head.size() - cut - 3, 'x') + "\n";
    const std::string text = padding + head +
                             "ResourceClaim\nmetadata: {name: far, namespace: team-a}\n"
                             "spec: {devices: {requests: []}}\n";
    REQUIRE(text.find("ResourceClaim") == 65536 - cut);
    const std::string path = (dir / "far.yaml").string();
    std::ofstream(path) << text;
    ManifestClaims claims("default");
    CHECK(claims.add_file(path));
    INFO(cut);
    CHECK(claims.resolve(ClaimKind::kClaim, "team-a", "far").status == ClaimLookup::kFound);
  }
  const std::string none = (dir / "none.yaml").string();
  std::ofstream(none) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n";
  ManifestClaims claims("default");
  CHECK(claims.add_file(none));
  CHECK(claims.size() == 0);
  std::filesystem::remove_all(dir);
}

// GPU034 reads a ClusterQueue against the run's ResourceFlavors (cluster-scoped) and LocalQueues
// (spec.clusterQueue: kueue apis/kueue/v1beta2/localqueue_types.go), whatever the file order.
TEST_CASE("manifest claims: Kueue ResourceFlavors and LocalQueues are kept", "[lint][GPU034]") {
  ManifestClaims claims("lint-ns");
  claims.add_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: v1
kind: List
items:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: LocalQueue
  metadata: {name: train, namespace: ml}
  spec: {clusterQueue: gpu-queue}
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: LocalQueue
  metadata: {name: lab}
  spec: {clusterQueue: lab-queue}
- apiVersion: example.com/v1
  kind: LocalQueue
  metadata: {name: other}
  spec: {clusterQueue: x}
)",
                  false);
  CHECK(claims.size() == 0);
  const KueueRunObjects& kueue = claims.kueue();
  REQUIRE(kueue.flavor_labels.size() == 2);
  CHECK(kueue.flavor_labels.at("a100") ==
        Json{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}});
  CHECK(kueue.flavor_labels.at("default-flavor") == Json::object());
  REQUIRE(kueue.local_queues.size() == 2);
  CHECK(kueue.local_queues.at("ml/train").cluster_queue == "gpu-queue");
  // No namespace: lint's --namespace.
  CHECK(kueue.local_queues.at("lint-ns/lab").cluster_queue == "lab-queue");
}

}  // namespace
}  // namespace manifest_claims_test
}  // namespace gpuadmit::lint
