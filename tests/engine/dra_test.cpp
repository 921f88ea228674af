// engine/dra.h: the request shapes of every served resource.k8s.io version, GPU units, a pod's
// claims resolved and counted per container and per pod, and the pipeline's treatment of pods
// whose claims are GPU claims, other devices, or cannot be resolved (docs/dra.md).

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "engine/dra.h"
#include "engine/pipeline.h"
#include "mutators/all_mutators.h"
#include "rules/all_rules.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace dra_test {
namespace {

using testing::policy_from_yaml;

constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: dra}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
      mig: {strategy: mixed, profiles: [1g.10gb, 3g.40gb]}
      deviceClasses:
        gpu.nvidia.com: {}
        mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7, migProfile: 1g.10gb}
    l4:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 4
      deviceClasses: {l4.example.com: {}}
  tenants:
    - name: ml
      namespaces: [ml]
      defaultClass: l4
      defaults: {perGPU: {cpu: "8"}}
)YAML";

// A resolver over a fixed set of claim objects; names it lacks are kNotFound, or kUnavailable
// for names starting with "down-" (an API error).
class FakeClaims final : public ClaimResolver {
 public:
  void add(ClaimKind kind, std::string name, std::string_view spec_json) {
    specs_[{kind, std::move(name)}] = Json::parse(spec_json);
  }
  ResolvedClaim resolve(ClaimKind kind, std::string_view, std::string_view name) const override {
    ResolvedClaim r;
    auto it = specs_.find({kind, std::string(name)});
    if (it != specs_.end()) {
      r.status = ClaimLookup::kFound;
      r.spec = it->second;
    } else if (name.rfind("down-", 0) == 0) {
      r.status = ClaimLookup::kUnavailable;
      r.error = "API server timed out";
    } else {
      r.status = ClaimLookup::kNotFound;
      r.error = "404";
    }
    return r;
  }

 private:
  std::map<std::pair<ClaimKind, std::string>, Json> specs_;
};

TEST_CASE("dra: claim_requests reads v1/v1beta2 exactly, firstAvailable and v1beta1", "[dra]") {
  const Json v1 = Json::parse(R"({"devices": {"requests": [
      {"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2,
                                "allocationMode": "ExactCount"}},
      {"name": "b", "firstAvailable": [
          {"name": "x", "deviceClassName": "gpu.nvidia.com", "count": 4},
          {"name": "y", "deviceClassName": "l4.example.com", "allocationMode": "All"}]},
      {"name": "c", "exactly": {"deviceClassName": "gpu.nvidia.com", "adminAccess": true,
          "selectors": [{"cel": {"expression":
              "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]}},
      {"name": "no-class", "exactly": {}}, 7]}})");
  const std::vector<DraRequest> r = claim_requests(v1, "spec");
  REQUIRE(r.size() == 4);
  CHECK(r[0].name == "a");
  CHECK(r[0].path == "spec.devices.requests[0].exactly");
  CHECK(r[0].count == 2);
  CHECK_FALSE(r[0].all);
  CHECK(r[1].name == "b/x");
  CHECK(r[1].request == "b");
  CHECK(r[1].alternative);
  CHECK(r[1].path == "spec.devices.requests[1].firstAvailable[0]");
  CHECK(r[2].all);
  CHECK(r[2].count == 1);
  CHECK(r[3].admin_access);
  REQUIRE(r[3].mig_profiles.size() == 1);
  CHECK(r[3].mig_profiles[0].first == "1g.10gb");
  CHECK(r[3].mig_profiles[0].second == "spec.devices.requests[2].exactly.selectors[0].cel");

  // v1beta1: the fields on the request itself; count defaults to 1.
  const Json beta1 = Json::parse(R"({"devices": {"requests": [
      {"name": "g", "deviceClassName": "gpu.nvidia.com", "count": 3, "adminAccess": true},
      {"name": "h", "deviceClassName": "gpu.nvidia.com"}]}})");
  const std::vector<DraRequest> b = claim_requests(beta1, "spec.spec");
  REQUIRE(b.size() == 2);
  CHECK(b[0].path == "spec.spec.devices.requests[0]");
  CHECK(b[0].count == 3);
  CHECK(b[0].admin_access);
  CHECK(b[1].count == 1);
}

TEST_CASE("dra: GPU units per request and claim", "[dra]") {
  const PolicyPtr policy = policy_from_yaml(kPolicy);
  const Json spec = Json::parse(R"({"devices": {"requests": [
      {"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}},
      {"name": "b", "firstAvailable": [
          {"name": "x", "deviceClassName": "gpu.nvidia.com", "count": 3},
          {"name": "y", "deviceClassName": "l4.example.com", "allocationMode": "All"}]},
      {"name": "m", "exactly": {"deviceClassName": "mig-1g.10gb.gpu.nvidia.com", "count": 8}},
      {"name": "nic", "exactly": {"deviceClassName": "sriov.nic.example.com", "count": 5}}]}})");
  const std::vector<DraRequest> r = claim_requests(spec, "spec");
  REQUIRE(r.size() == 5);
  CHECK(request_gpu_units(r[0], *policy) == 2);
  CHECK(request_gpu_units(r[1], *policy) == 3);
  CHECK(request_gpu_units(r[2], *policy) == 4);  // All: the class's gpusPerNode
  CHECK(request_gpu_units(r[3], *policy) == 2);  // ceil(8 / 7)
  CHECK(request_gpu_units(r[4], *policy) == 0);  // not a GPU
  // 2 + max(3, 4) + 2: the firstAvailable alternatives count as the largest.
  CHECK(claim_gpu_units(r, *policy) == 8);
}

// allocationMode All on a class without gpusPerNode is not 0 GPUs: the quota admission plugin's
// worst case, AllocationResultsMaxSize = 32 devices (KEP-4381, "ResourceQuota").
TEST_CASE("dra: allocationMode All without gpusPerNode counts 32 devices", "[dra]") {
  const PolicyPtr policy = policy_from_yaml(R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: dra-all}
spec:
  classes:
    any:
      deviceClasses:
        gpu.nvidia.com: {}
        mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7}
)YAML");
  const std::vector<DraRequest> r = claim_requests(Json::parse(R"({"devices": {"requests": [
      {"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}},
      {"name": "b", "exactly": {"deviceClassName": "mig-1g.10gb.gpu.nvidia.com",
                                "allocationMode": "All"}}]}})"),
                                                   "spec");
  REQUIRE(r.size() == 2);
  CHECK(request_gpu_units(r[0], *policy) == 32);
  CHECK(request_gpu_units(r[1], *policy) == 5);  // ceil(32 / 7)
}

Json pod_with_claims(std::string_view claims, std::string_view containers,
                     std::string_view extra = "") {
  return Json::parse(std::string(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "p", "namespace": "ml"},
      "spec": {"resourceClaims": )") +
                     std::string(claims) + R"(, "containers": )" + std::string(containers) +
                     std::string(extra) + "}}");
}

TEST_CASE("dra: a pod's claims per container and per pod, shared claims counted once", "[dra]") {
  const PolicyPtr policy = policy_from_yaml(kPolicy);
  FakeClaims claims;
  claims.add(ClaimKind::kTemplate, "two",
             R"({"devices": {"requests": [
                 {"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}},
                 {"name": "n", "exactly": {"deviceClassName": "sriov.nic.example.com"}}]}})");
  claims.add(ClaimKind::kClaim, "one-l4",
             R"({"devices": {"requests": [{"name": "g",
                 "exactly": {"deviceClassName": "l4.example.com"}}]}})");
  Json pod = pod_with_claims(
      R"([{"name": "shared", "resourceClaimTemplateName": "two"},
          {"name": "solo", "resourceClaimName": "one-l4"},
          {"name": "gone", "resourceClaimTemplateName": "missing"},
          {"name": "odd"}])",
      R"([{"name": "a", "resources": {"claims": [{"name": "shared"}, {"name": "solo"}]}},
          {"name": "b", "resources": {"claims": [{"name": "shared", "request": "g"},
                                                  {"name": "shared", "request": "g"}]}},
          {"name": "c", "resources": {"claims": [{"name": "shared", "request": "n"}]}},
          {"name": "d"}])");
  const auto locations = find_pod_specs(pod, *policy);
  auto view = *PodView::make(pod, locations[0]);
  const PodDra dra = resolve_pod_claims(view, *policy, &claims, "ml");
  REQUIRE(dra.claims.size() == 3);  // "odd" names nothing: skipped
  CHECK(dra.claims[0].units == 2);
  CHECK(dra.claims[0].gpu_class->name == "a100");
  CHECK(dra.claims[0].device_class == "gpu.nvidia.com");
  CHECK(dra.claims[0].path == "spec.resourceClaims[0]");
  CHECK(dra.claims[1].gpu_class->name == "l4");
  CHECK(dra.claims[2].status == ClaimLookup::kNotFound);
  CHECK(dra.any_gpu);
  CHECK(dra.any_unresolved);
  CHECK(dra.container_units == std::vector<int64_t>{3, 2, 0, 0});
  CHECK(dra.pod_units == 3);  // 2 + 1: the shared claim once
  CHECK(dra.first_gpu_claim() == &dra.claims[0]);

  const PodDra none = resolve_pod_claims(view, *policy, nullptr, "ml");
  CHECK(none.claims.size() == 3);
  CHECK_FALSE(none.any_gpu);
  CHECK(none.any_unresolved);
  CHECK(none.pod_units == 0);
  CHECK(none.container_units == std::vector<int64_t>{0, 0, 0, 0});
}

struct Outcome {
  bool allowed;
  std::vector<std::string> findings;  // "GPU009 spec.tolerations[0]"
  std::string class_annotation;
};

Outcome run(const Json& pod, const ClaimResolver* claims) {
  static const PolicyPtr policy = policy_from_yaml(kPolicy);
  static const Pipeline pipeline(default_mutators(), default_rules());
  EvaluateOptions options;
  options.ns = "ml";
  options.claims = claims;
  const Evaluation e = pipeline.evaluate(pod, options, *policy);
  Outcome o{e.allowed, {}, ""};
  for (const Finding& f : e.findings) o.findings.push_back(f.rule + " " + f.path);
  const Json* metadata = find_member(e.mutated, "metadata");
  if (const Json* a = metadata != nullptr ? find_member(*metadata, "annotations") : nullptr) {
    o.class_annotation = std::string(string_member(*a, "gpuadmit.io/class"));
  }
  return o;
}

TEST_CASE("dra: pipeline: GPU, possibly-GPU and non-GPU claim pods", "[dra][pipeline]") {
  FakeClaims claims;
  claims.add(ClaimKind::kTemplate, "gpu",
             R"({"devices": {"requests": [{"name": "g",
                 "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}})");
  claims.add(ClaimKind::kTemplate, "nic",
             R"({"devices": {"requests": [{"name": "n",
                 "exactly": {"deviceClassName": "sriov.nic.example.com"}}]}})");
  const std::string containers = R"([{"name": "c", "resources": {"claims": [{"name": "x"}]}}])";
  const std::string tolerates =
      R"(, "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}])";
  auto pod = [&](std::string_view tmpl, std::string_view extra) {
    return pod_with_claims(std::string(R"([{"name": "x", "resourceClaimTemplateName": ")") +
                               std::string(tmpl) + R"("}])",
                           containers, extra);
  };

  // Resolved GPU claim: class from the DeviceClass (a100, not the tenant default l4).
  Outcome o = run(pod("gpu", tolerates), &claims);
  CHECK(o.allowed);
  CHECK(o.findings.empty());
  CHECK(o.class_annotation == "a100");

  // The webhook without a lookup (null resolver): the claim's GPUs cannot be counted, so the Pod
  // is denied (GPU023), never admitted as asking 0 GPUs — and never GPU009 either.
  const std::vector<std::string> gpu023{"GPU023 spec.resourceClaims[0].resourceClaimTemplateName"};
  o = run(pod("gpu", tolerates), nullptr);
  CHECK_FALSE(o.allowed);
  CHECK(o.findings == gpu023);

  // Unavailable lookup (API down), even without GPU intent: denied the same way.
  o = run(pod("down-x", ""), &claims);
  CHECK_FALSE(o.allowed);
  CHECK(o.findings == gpu023);

  // Not found (the tenant would create it after the Pod): denied.
  o = run(pod("missing", tolerates), &claims);
  CHECK_FALSE(o.allowed);
  CHECK(o.findings == gpu023);

  // A Deployment's template naming a template not created yet (Helm creates it after the
  // Deployment): not denied — its Pods are judged at their CREATE. Tolerating the GPU taint, it
  // is a GPU pod of the tenant default, never GPU009.
  const Json deployment = Json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "d", "namespace": "ml"},
      "spec": {"template": {"spec": {
          "resourceClaims": [{"name": "x", "resourceClaimTemplateName": "missing"}],
          "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
          "containers": [{"name": "c", "resources": {"claims": [{"name": "x"}]}}]}}}})");
  o = run(deployment, &claims);
  CHECK(o.allowed);
  CHECK(o.findings.empty());

  // A resolved NIC claim is no GPU claim: tolerating the GPU taint is GPU009.
  o = run(pod("nic", tolerates), &claims);
  CHECK_FALSE(o.allowed);
  CHECK(o.findings == std::vector<std::string>{"GPU009 spec.tolerations[0]"});
  o = run(pod("nic", ""), &claims);
  CHECK(o.allowed);
  CHECK(o.class_annotation.empty());
}

// Issue 34, point 8: the GPUs of all a Pod's claims are summed per pod and per container, and
// checked against maxGPUsPerPod, maxGPUsPerContainer, GPU006 and the quota, naming each claim.
constexpr std::string_view kLimitsPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: dra-limits}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
      mig: {strategy: mixed, profiles: [1g.10gb]}
      deviceClasses:
        gpu.nvidia.com: {}
        mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7, migProfile: 1g.10gb}
  tenants:
    - name: capped
      namespaces: [capped]
      limits: {maxGPUsPerContainer: 4, maxGPUsPerPod: 4}
      quota: {gpus: 6}
    - name: audited
      namespaces: [audited]
      limits: {maxGPUsPerContainer: 4, maxGPUsPerPod: 4}
      enforcement: {mode: audit}
    - name: relaxed
      namespaces: [relaxed]
      limits: {maxGPUsPerPod: 4}
      enforcement: {rules: {GPU019: warn}}
    - name: open
      namespaces: [open]
)YAML";

const FakeClaims& limit_claims() {
  static const FakeClaims claims = [] {
    FakeClaims c;
    const std::string four =
        R"({"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName":
            "gpu.nvidia.com", "count": 4}}]}})";
    c.add(ClaimKind::kTemplate, "four", four);
    c.add(ClaimKind::kClaim, "four-shared", four);
    c.add(ClaimKind::kTemplate, "five",
          R"({"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName":
              "gpu.nvidia.com", "count": 5}}]}})");
    // 8 devices of 7 per GPU: 2 GPU units; plus 1 whole GPU in a second request.
    c.add(ClaimKind::kTemplate, "mixed",
          R"({"devices": {"requests": [
              {"name": "m", "exactly": {"deviceClassName": "mig-1g.10gb.gpu.nvidia.com",
                                         "count": 8}},
              {"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}})");
    return c;
  }();
  return claims;
}

struct LimitFinding {
  std::string rule;
  std::string severity;
  std::string path;
  std::string message;
  bool audit = false;
  bool operator==(const LimitFinding&) const = default;
};

std::ostream& operator<<(std::ostream& os, const LimitFinding& f) {
  return os << f.rule << " " << f.severity << (f.audit ? " (audit) " : " ") << f.path << ": "
            << f.message;
}

std::pair<bool, std::vector<LimitFinding>> run_limits(const Json& object, std::string ns,
                                                      std::string username = "alice") {
  static const PolicyPtr policy = policy_from_yaml(kLimitsPolicy);
  static const Pipeline pipeline(default_mutators(), default_rules());
  EvaluateOptions options;
  options.ns = std::move(ns);
  options.username = std::move(username);
  options.claims = &limit_claims();
  const Evaluation e = pipeline.evaluate(object, options, *policy);
  std::vector<LimitFinding> out;
  for (const Finding& f : e.findings) {
    out.push_back({f.rule, std::string(severity_name(f.severity)), f.path, f.message, f.audit});
  }
  return {e.allowed, out};
}

// A Pod in `ns` with the claims `claims` (JSON list) and the containers `containers`.
Json limit_pod(std::string_view ns, std::string_view claims, std::string_view containers) {
  return Json::parse(std::string(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "p", "namespace": ")") +
                     std::string(ns) + R"("}, "spec": {"resourceClaims": )" + std::string(claims) +
                     R"(, "containers": )" + std::string(containers) + "}}");
}

constexpr std::string_view kTwoClaims =
    R"([{"name": "x", "resourceClaimTemplateName": "four"},
        {"name": "y", "resourceClaimName": "four-shared"}])";

TEST_CASE("dra: two 4-GPU claims in one pod exceed maxGPUsPerPod 4 and quota 6", "[dra][limits]") {
  // One claim per container: each container is within maxGPUsPerContainer 4, the pod is not.
  const auto [allowed, findings] =
      run_limits(limit_pod("capped", kTwoClaims,
                           R"([{"name": "a", "resources": {"claims": [{"name": "x"}]}},
                    {"name": "b", "resources": {"claims": [{"name": "y"}]}}])"),
                 "capped");
  CHECK_FALSE(allowed);
  const std::string breakdown = "claim x (gpu.nvidia.com): 4, claim y (gpu.nvidia.com): 4";
  CHECK(findings ==
        std::vector<LimitFinding>{
            {"GPU005", "deny", "spec",
             "pod requests 8 GPUs (" + breakdown +
                 "), more than maxGPUsPerPod 4 of tenant capped; request at most 4 per pod, or "
                 "split the work across pods"},
            {"GPU013", "deny", "spec",
             "pod requests 8 GPUs (" + breakdown +
                 "), more than the GPU quota 6 of tenant capped; it could never start: request at "
                 "most 6 GPUs, or ask for a larger quota"}});
}

TEST_CASE("dra: a container using two claims exceeds maxGPUsPerContainer, named per claim",
          "[dra][limits]") {
  const auto [allowed, findings] = run_limits(
      limit_pod("capped", kTwoClaims,
                R"([{"name": "a", "resources": {"claims": [{"name": "x"}, {"name": "y"}]}}])"),
      "capped");
  CHECK_FALSE(allowed);
  const std::string breakdown = "claim x (gpu.nvidia.com): 4, claim y (gpu.nvidia.com): 4";
  REQUIRE(findings.size() == 3);
  CHECK(findings[0] == LimitFinding{"GPU005", "deny", "spec.containers[0].resources",
                                    "container a: 8 GPUs (" + breakdown +
                                        ") exceed maxGPUsPerContainer 4 of tenant capped; request "
                                        "at most 4 per container"});
  CHECK(findings[1].rule == "GPU005");  // the pod total, as above
  CHECK(findings[2].rule == "GPU013");
}

TEST_CASE("dra: a claim shared by containers, or named whole and by request, counts once",
          "[dra][limits]") {
  // NVIDIA's MPS sample shape: two containers share one 4-GPU claim; the pod takes 4.
  auto [allowed, findings] =
      run_limits(limit_pod("capped", R"([{"name": "s", "resourceClaimName": "four-shared"}])",
                           R"([{"name": "a", "resources": {"claims": [{"name": "s"}]}},
                               {"name": "b", "resources": {"claims": [{"name": "s"}]}}])"),
                 "capped");
  CHECK(allowed);
  CHECK(findings.empty());
  // One container naming the claim whole and one of its requests: 4, not 8.
  std::tie(allowed, findings) =
      run_limits(limit_pod("capped", R"([{"name": "s", "resourceClaimTemplateName": "four"}])",
                           R"([{"name": "a", "resources": {"claims": [{"name": "s"},
                                                            {"name": "s", "request": "g"}]}}])"),
                 "capped");
  CHECK(allowed);
  CHECK(findings.empty());
}

TEST_CASE("dra: GPU006: a container's claims must fit on one node, named per claim",
          "[dra][limits]") {
  // 5 whole GPUs + ceil(8 / 7) = 2 units of the MIG DeviceClass in one container: 7 of 8; the
  // pod adds the mixed claim's whole GPU: 5 + 3 = 8 of 8. Fits.
  auto [allowed, findings] =
      run_limits(limit_pod("open",
                           R"([{"name": "x", "resourceClaimTemplateName": "five"},
                    {"name": "m", "resourceClaimTemplateName": "mixed"}])",
                           R"([{"name": "a", "resources": {"claims": [{"name": "x"},
                                                            {"name": "m", "request": "m"}]}}])"),
                 "open");
  CHECK(allowed);
  CHECK(findings.empty());
  // Two 5-GPU claims in one container: 10 GPUs on an 8-GPU node.
  std::tie(allowed, findings) = run_limits(
      limit_pod("open",
                R"([{"name": "x", "resourceClaimTemplateName": "five"},
                    {"name": "y", "resourceClaimTemplateName": "five"}])",
                R"([{"name": "a", "resources": {"claims": [{"name": "x"}, {"name": "y"}]}}])"),
      "open");
  CHECK_FALSE(allowed);
  CHECK(findings == std::vector<LimitFinding>{
                        {"GPU006", "deny", "spec.containers[0].resources.claims",
                         "container a: 10 GPUs of DRA claims (claim x (gpu.nvidia.com): 5, claim "
                         "y (gpu.nvidia.com): 5) cannot fit on one node of class a100 (8 GPUs); "
                         "request at most 8, or split the work across pods"}});
  // The same claims in two containers: each fits, the pod (one node) does not.
  std::tie(allowed, findings) =
      run_limits(limit_pod("open",
                           R"([{"name": "x", "resourceClaimTemplateName": "five"},
                    {"name": "y", "resourceClaimTemplateName": "five"}])",
                           R"([{"name": "a", "resources": {"claims": [{"name": "x"}]}},
                    {"name": "b", "resources": {"claims": [{"name": "y"}]}}])"),
                 "open");
  CHECK_FALSE(allowed);
  CHECK(findings == std::vector<LimitFinding>{
                        {"GPU006", "deny", "spec",
                         "pod requests 10 GPUs (claim x (gpu.nvidia.com): 5, claim y "
                         "(gpu.nvidia.com): 5) but a node of class a100 has 8; a pod runs on one "
                         "node: request at most 8 per pod, or split the work across pods"}});
}

TEST_CASE("dra: a tenant in audit mode is warned, audited, for its claims' GPUs", "[dra][limits]") {
  const auto [allowed, findings] =
      run_limits(limit_pod("audited", kTwoClaims,
                           R"([{"name": "a", "resources": {"claims": [{"name": "x"}]}},
                    {"name": "b", "resources": {"claims": [{"name": "y"}]}}])"),
                 "audited");
  CHECK(allowed);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0] == LimitFinding{"GPU005", "warn", "spec",
                                    "pod requests 8 GPUs (claim x (gpu.nvidia.com): 4, claim y "
                                    "(gpu.nvidia.com): 4), more than maxGPUsPerPod 4 of tenant "
                                    "audited; request at most 4 per pod, or split the work across "
                                    "pods",
                                    true});
  // Unresolved claims in audit mode: GPU023 warns (audited), the Pod is admitted.
  const auto [allowed2, findings2] =
      run_limits(limit_pod("audited", R"([{"name": "x", "resourceClaimTemplateName": "later"}])",
                           R"([{"name": "a", "resources": {"claims": [{"name": "x"}]}}])"),
                 "audited");
  CHECK(allowed2);
  REQUIRE(findings2.size() == 1);
  CHECK(findings2[0].rule == "GPU023");
  CHECK(findings2[0].severity == "warn");
  CHECK(findings2[0].audit);
}

// Claim objects follow the tenant's enforcement.rules and audit mode too (issue 34, point 10:
// evaluate_claim used the policy's action only).
TEST_CASE("dra: claim rules take the tenant's rule actions and audit mode", "[dra][limits]") {
  const Json claim = Json::parse(R"({"apiVersion": "resource.k8s.io/v1",
      "kind": "ResourceClaim", "metadata": {"name": "big"},
      "spec": {"devices": {"requests": [{"name": "g",
          "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 5}}]}}})");
  const std::string message = "ResourceClaim asks for 5 GPUs, more than maxGPUsPerPod 4 of tenant ";
  const std::string per_request =
      "ResourceClaim request g (DeviceClass gpu.nvidia.com) asks for 5 GPUs (count 5), more than "
      "maxGPUsPerContainer 4 of tenant ";
  const std::string tail = "; a pod using it could never be admitted: ask for at most 4";
  auto [allowed, findings] = run_limits(claim, "capped");
  CHECK_FALSE(allowed);
  CHECK(findings ==
        std::vector<LimitFinding>{{"GPU019", "deny", "spec.devices.requests[0].exactly.count",
                                   per_request + "capped; lower the count to at most 4"},
                                  {"GPU019", "deny", "spec", message + "capped" + tail}});
  std::tie(allowed, findings) = run_limits(claim, "audited");
  CHECK(allowed);
  CHECK(findings ==
        std::vector<LimitFinding>{{"GPU019", "warn", "spec.devices.requests[0].exactly.count",
                                   per_request + "audited; lower the count to at most 4", true},
                                  {"GPU019", "warn", "spec", message + "audited" + tail, true}});
  // The tenant's rules: {GPU019: warn} — a warning, not audited.
  std::tie(allowed, findings) = run_limits(claim, "relaxed");
  CHECK(allowed);
  CHECK(findings ==
        std::vector<LimitFinding>{{"GPU019", "warn", "spec", message + "relaxed" + tail}});
}

TEST_CASE("dra: targets_gpu_pool is what GPU009 would report", "[dra]") {
  const PolicyPtr policy = policy_from_yaml(kPolicy);
  auto targets = [&](std::string_view spec) {
    return targets_gpu_pool(Json::parse(spec), *policy);
  };
  CHECK(targets(R"({"tolerations": [{"operator": "Exists"}]})"));
  CHECK(targets(R"({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}})"));
  CHECK_FALSE(targets(R"({"nodeSelector": {"nvidia.com/gpu.product": "Tesla-T4"}})"));
  CHECK(targets(R"({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "nvidia.com/gpu.product", "operator": "Exists"}]}]}}}})"));
  CHECK_FALSE(targets(R"({"tolerations": [{"key": "other", "operator": "Exists"}]})"));
  CHECK_FALSE(targets(R"({})"));
}

TEST_CASE("dra: claim objects: only resource.k8s.io claims, template spec at spec.spec", "[dra]") {
  CHECK(is_claim_object("resource.k8s.io/v1", "ResourceClaim"));
  CHECK(is_claim_object("resource.k8s.io/v1beta1", "ResourceClaimTemplate"));
  CHECK_FALSE(is_claim_object("example.com/v1", "ResourceClaim"));
  CHECK_FALSE(is_claim_object("resource.k8s.io/v1", "DeviceClass"));
  std::string path;
  const Json t = Json::parse(R"({"spec": {"spec": {"devices": {}}}})");
  CHECK(claim_spec_of(t, "ResourceClaimTemplate", &path) == &t["spec"]["spec"]);
  CHECK(path == "spec.spec");
  CHECK(claim_spec_of(t, "ResourceClaim", &path) == &t["spec"]);
  CHECK(path == "spec");
  CHECK(claim_spec_of(Json::parse(R"({"spec": 3})"), "ResourceClaim", &path) == nullptr);
}

// KEP-5004's claim: honoured only when kube-scheduler made it. The scheduler's shape is what
// preFilterExtendedResources builds (k8s pkg/scheduler/framework/plugins/dynamicresources/
// extendeddynamicresources.go); each other row changes one thing of it.
TEST_CASE("dra: the scheduler's extended-resource claim, and every forgery of it", "[dra]") {
  const std::string kOwner =
      R"({"apiVersion":"v1","kind":"Pod","name":"web-pod","uid":"u-1","controller":true})";
  auto claim = [](const std::string& annotation, const std::string& owners) {
    std::string metadata = R"({"generateName":"web-pod-extended-resources-","namespace":"web")";
    if (!annotation.empty()) {
      metadata +=
          R"(,"annotations":{"resource.kubernetes.io/extended-resource-claim":)" + annotation + "}";
    }
    if (!owners.empty()) metadata += R"(,"ownerReferences":)" + owners;
    return Json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":)" +
                       metadata + R"(},"spec":{"devices":{"requests":[]}}})");
  };
  struct Case {
    std::string name;
    Json object;
    std::string kind;
    std::string username;
    bool scheduler;
  };
  const std::string kScheduler = "system:kube-scheduler";
  const std::vector<Case> cases = {
      {"the scheduler's claim", claim("\"true\"", "[" + kOwner + "]"), "ResourceClaim", kScheduler,
       true},
      {"the same claim from a tenant", claim("\"true\"", "[" + kOwner + "]"), "ResourceClaim",
       "alice@example.com", false},
      {"from a service account", claim("\"true\"", "[" + kOwner + "]"), "ResourceClaim",
       "system:serviceaccount:web:default", false},
      {"without a user (lint)", claim("\"true\"", "[" + kOwner + "]"), "ResourceClaim", "", false},
      {"a template, even from the scheduler", claim("\"true\"", "[" + kOwner + "]"),
       "ResourceClaimTemplate", kScheduler, false},
      {"without the annotation", claim("", "[" + kOwner + "]"), "ResourceClaim", kScheduler, false},
      {"the annotation not \"true\"", claim("\"yes\"", "[" + kOwner + "]"), "ResourceClaim",
       kScheduler, false},
      {"no ownerReferences", claim("\"true\"", ""), "ResourceClaim", kScheduler, false},
      {"an owner that is not a Pod",
       claim("\"true\"",
             R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","controller":true}])"),
       "ResourceClaim", kScheduler, false},
      {"an owner that is not the controller",
       claim("\"true\"", R"([{"apiVersion":"v1","kind":"Pod","name":"web-pod"}])"), "ResourceClaim",
       kScheduler, false},
      {"controller as a string",
       claim("\"true\"",
             R"([{"apiVersion":"v1","kind":"Pod","name":"web-pod","controller":"true"}])"),
       "ResourceClaim", kScheduler, false},
      {"two owners", claim("\"true\"", "[" + kOwner + "," + kOwner + "]"), "ResourceClaim",
       kScheduler, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(is_scheduler_extended_resource_claim(c.object, c.kind, c.username) == c.scheduler);
  }
}

}  // namespace
}  // namespace dra_test
}  // namespace gpuadmit
