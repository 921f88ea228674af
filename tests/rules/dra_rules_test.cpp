// GPU018–GPU023 (docs/rules.md): each claim rule on claim objects of every request shape, with
// its exact messages and paths, and GPU023 on a pod's unresolved reference.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/dra.h"
#include "rules/dra_admin_access.h"
#include "rules/dra_allocation_mode_all.h"
#include "rules/dra_count_limits.h"
#include "rules/dra_device_class.h"
#include "rules/dra_mig_profile.h"
#include "rules/dra_unresolved_claim.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace dra_rules_test {
namespace {

using testing::policy_from_yaml;

const PolicyPtr& policy() {
  static const PolicyPtr p = policy_from_yaml(R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: dra}
spec:
  classes:
    a100:
      gpusPerNode: 8
      mig: {strategy: mixed, profiles: [1g.10gb, 3g.40gb]}
      deviceClasses:
        gpu.nvidia.com: {}
        mig.nvidia.com: {}
        mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7, migProfile: 1g.10gb}
    l4:
      gpusPerNode: 4
      deviceClasses: {l4.example.com: {}}
  tenants:
    - name: web
      namespaces: [web]
      allowedClasses: [l4]
      limits: {maxGPUsPerContainer: 1, maxGPUsPerPod: 2}
    - name: nogpu
      namespaces: [sandbox]
      allowedClasses: []
    - name: admins
      namespaces: [admin]
      dra: {adminAccess: true, allocationModeAll: true}
)YAML");
  return p;
}

// "path: message" of each violation of `rule` on the claim object (in namespace `ns`).
std::vector<std::string> check(const Rule& rule, std::string_view object_json, std::string_view ns,
                               const ClaimResolver* cluster = nullptr,
                               std::string_view username = "") {
  const Json object = Json::parse(object_json);
  const std::string_view kind = string_member(object, "kind");
  std::string spec_path;
  const Json* spec = claim_spec_of(object, kind, &spec_path);
  REQUIRE(spec != nullptr);
  const std::vector<DraRequest> requests = claim_requests(*spec, spec_path);
  ClaimContext ctx;
  ctx.policy = policy().get();
  ctx.tenant = policy()->tenant_for(ns);
  ctx.ns = ns;
  ctx.kind = kind;
  ctx.requests = &requests;
  ctx.spec_path = spec_path;
  if (const Json* metadata = find_member(object, "metadata")) {
    ctx.name = string_member(*metadata, "name");
  }
  ctx.claims = cluster;
  ctx.username = username;
  std::vector<Violation> out;
  rule.check_claim(object, ctx, out);
  std::vector<std::string> lines;
  for (const Violation& v : out) lines.push_back(v.path + ": " + v.message);
  return lines;
}

std::string claim(std::string_view requests) {
  return std::string(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
      "metadata": {"name": "c"}, "spec": {"devices": {"requests": )") +
         std::string(requests) + "}}}";
}

using Lines = std::vector<std::string>;

TEST_CASE("GPU018: a GPU DeviceClass of a class the tenant may not use", "[rules][dra]") {
  const auto rule = make_dra_device_class_rule();
  const std::string requests = claim(R"([
      {"name": "ok", "exactly": {"deviceClassName": "l4.example.com"}},
      {"name": "big", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
      {"name": "nic", "exactly": {"deviceClassName": "sriov.nic.example.com"}}])");
  CHECK(check(*rule, requests, "web") ==
        Lines{"spec.devices.requests[1].exactly.deviceClassName: ResourceClaim request big "
              "(DeviceClass gpu.nvidia.com) hands out GPUs of class a100, which tenant web may "
              "not use; use a DeviceClass of an allowed class (l4)"});
  CHECK(check(*rule, claim(R"([{"name": "g", "exactly": {"deviceClassName": "l4.example.com"}}])"),
              "sandbox") ==
        Lines{"spec.devices.requests[0].exactly.deviceClassName: ResourceClaim request g "
              "(DeviceClass l4.example.com) hands out GPUs of class l4, which tenant nogpu may "
              "not use (the tenant may use no GPUs)"});
  CHECK(check(*rule, requests, "admin").empty());      // allowedClasses unset: every class
  CHECK(check(*rule, requests, "elsewhere").empty());  // no tenant
}

TEST_CASE("GPU019: claim and request counts against the tenant's limits", "[rules][dra]") {
  const auto rule = make_dra_count_limits_rule();
  CHECK(check(*rule, claim(R"([
      {"name": "a", "exactly": {"deviceClassName": "l4.example.com", "count": 2}},
      {"name": "b", "exactly": {"deviceClassName": "l4.example.com"}},
      {"name": "nic", "exactly": {"deviceClassName": "sriov.nic.example.com", "count": 9}}])"),
              "web") ==
        Lines{"spec.devices.requests[0].exactly.count: ResourceClaim request a (DeviceClass "
              "l4.example.com) asks for 2 GPUs (count 2), more than maxGPUsPerContainer 1 of "
              "tenant web; lower the count to at most 1",
              "spec: ResourceClaim asks for 3 GPUs, more than maxGPUsPerPod 2 of tenant web; a "
              "pod using it could never be admitted: ask for at most 2"});
  // A template's spec is spec.spec; v1beta1 fields on the request; 7 slices = 1 unit.
  CHECK(check(*rule, R"({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate",
      "spec": {"spec": {"devices": {"requests": [
          {"name": "m", "deviceClassName": "mig-1g.10gb.gpu.nvidia.com", "count": 7}]}}}})",
              "web")
            .empty());
  CHECK(check(*rule, R"({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate",
      "spec": {"spec": {"devices": {"requests": [
          {"name": "m", "deviceClassName": "l4.example.com", "count": 3}]}}}})",
              "web") ==
        Lines{"spec.spec.devices.requests[0].count: ResourceClaimTemplate request m (DeviceClass "
              "l4.example.com) asks for 3 GPUs (count 3), more than maxGPUsPerContainer 1 of "
              "tenant web; lower the count to at most 1",
              "spec.spec: ResourceClaimTemplate asks for 3 GPUs, more than maxGPUsPerPod 2 of "
              "tenant web; a pod using it could never be admitted: ask for at most 2"});
}

TEST_CASE("GPU020: allocationMode All needs the tenant's switch", "[rules][dra]") {
  const auto rule = make_dra_allocation_mode_all_rule();
  const std::string all = claim(R"([
      {"name": "g", "exactly": {"deviceClassName": "l4.example.com", "allocationMode": "All"}},
      {"name": "n", "exactly": {"deviceClassName": "nic.example.com", "allocationMode": "All"}}])");
  CHECK(check(*rule, all, "web") ==
        Lines{"spec.devices.requests[0].exactly.allocationMode: ResourceClaim request g "
              "(DeviceClass l4.example.com) has allocationMode All: every matching GPU of a node "
              "of class l4, which tenant web may not ask for; use allocationMode ExactCount with "
              "a count, or allow it with the tenant's dra.allocationModeAll"});
  CHECK(check(*rule, all, "elsewhere") ==
        Lines{"spec.devices.requests[0].exactly.allocationMode: ResourceClaim request g "
              "(DeviceClass l4.example.com) has allocationMode All: every matching GPU of a node "
              "of class l4, which namespace elsewhere (no tenant) may not ask for; use "
              "allocationMode ExactCount with a count, or allow it with the tenant's "
              "dra.allocationModeAll"});
  CHECK(check(*rule, all, "admin").empty());
}

TEST_CASE("GPU021: adminAccess needs the tenant's explicit permission", "[rules][dra]") {
  const auto rule = make_dra_admin_access_rule();
  const std::string admin = R"({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
      "spec": {"devices": {"requests": [
          {"name": "g", "deviceClassName": "gpu.nvidia.com", "adminAccess": true},
          {"name": "h", "deviceClassName": "gpu.nvidia.com", "adminAccess": false}]}}})";
  CHECK(check(*rule, admin, "web") ==
        Lines{"spec.devices.requests[0].adminAccess: ResourceClaim request g (DeviceClass "
              "gpu.nvidia.com) has adminAccess: it would reach GPUs of class a100 that other pods "
              "are using, which tenant web is not allowed to; remove adminAccess, or allow it "
              "explicitly with the tenant's dra.adminAccess"});
  CHECK(check(*rule, admin, "elsewhere").size() == 1);
  CHECK(check(*rule, admin, "admin").empty());
}

TEST_CASE("GPU022: literal MIG profiles against the class and the DeviceClass", "[rules][dra]") {
  const auto rule = make_dra_mig_profile_rule();
  const auto sel = [](std::string_view profile) {
    return R"("selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == ')" +
           std::string(profile) + R"('"}}])";
  };
  CHECK(check(*rule,
              claim(R"([{"name": "a", "exactly": {"deviceClassName": "mig.nvidia.com", )" +
                    sel("3g.40gb") + R"(}},
                 {"name": "b", "exactly": {"deviceClassName": "mig.nvidia.com", )" +
                    sel("2g.20gb") + R"(}},
                 {"name": "c", "exactly": {"deviceClassName": "mig-1g.10gb.gpu.nvidia.com", )" +
                    sel("3g.40gb") + R"(}},
                 {"name": "d", "exactly": {"deviceClassName": "l4.example.com", )" +
                    sel("2g.20gb") + "}}]"),
              "web") ==
        Lines{"spec.devices.requests[1].exactly.selectors[0].cel: ResourceClaim request b "
              "(DeviceClass mig.nvidia.com) selects MIG profile 2g.20gb, which class a100 does "
              "not offer (1g.10gb, 3g.40gb); the claim could never be allocated: select one of "
              "them",
              "spec.devices.requests[2].exactly.selectors[0].cel: ResourceClaim request c "
              "(DeviceClass mig-1g.10gb.gpu.nvidia.com) selects MIG profile 3g.40gb but the "
              "DeviceClass hands out only 1g.10gb; no device can match: select 1g.10gb or use the "
              "DeviceClass of 3g.40gb"});
}

TEST_CASE("GPU023: a Pod's claims that gpuadmit could not read", "[rules][dra]") {
  const auto rule = make_dra_unresolved_claim_rule();
  const std::string pod_json = R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "p"},
      "spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "gone"},
                                  {"name": "b", "resourceClaimTemplateName": "down"},
                                  {"name": "c", "resourceClaimTemplateName": "here"}],
               "containers": [{"name": "c"}]}})";
  testing::PodFixture pod(policy(), pod_json, "web");
  PodDra dra;
  PodClaim gone;
  gone.name = "a";
  gone.kind = ClaimKind::kClaim;
  gone.reference = "gone";
  gone.path = "spec.resourceClaims[0]";
  gone.status = ClaimLookup::kNotFound;
  gone.error = "HTTP 404";
  PodClaim down = gone;
  down.name = "b";
  down.kind = ClaimKind::kTemplate;
  down.reference = "down";
  down.path = "spec.resourceClaims[1]";
  down.status = ClaimLookup::kUnavailable;
  down.error = "claim lookup is off";
  PodClaim here = down;
  here.name = "c";
  here.reference = "here";
  here.path = "spec.resourceClaims[2]";
  here.status = ClaimLookup::kFound;
  here.error.clear();
  dra.claims = {gone, down, here};
  pod.ctx.dra = &dra;
  std::vector<Violation> out;
  rule->check(pod.view(), pod.ctx, out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].path == "spec.resourceClaims[0].resourceClaimName");
  CHECK(out[0].message ==
        "claim a names ResourceClaim gone, which was not found in namespace web (HTTP 404); its "
        "GPUs cannot be counted against the tenant's limits and quota: create it in the Pod's "
        "namespace before the Pod (lint: pass its manifest too)");
  CHECK(out[1].path == "spec.resourceClaims[1].resourceClaimTemplateName");
  CHECK(out[1].message ==
        "claim b names ResourceClaimTemplate down in namespace web, which gpuadmit could not "
        "read (claim lookup is off); its GPUs cannot be counted against the tenant's limits and "
        "quota: create the Pod again once the webhook can read it (serve --dra-lookup, with get "
        "on resourceclaims and resourceclaimtemplates: docs/dra.md)");
  CHECK(rule->default_action() == Action::kDeny);

  // A workload's pod template takes no GPUs: its Pods are judged when they are created.
  testing::PodFixture deployment(policy(), R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "d"},
      "spec": {"template": {"spec": {"resourceClaims": [
                   {"name": "a", "resourceClaimName": "gone"}],
               "containers": [{"name": "c"}]}}}})",
                                 "web");
  deployment.ctx.dra = &dra;
  out.clear();
  rule->check(deployment.view(), deployment.ctx, out);
  CHECK(out.empty());
}

// The webhook's Pod list, answering every name alike; counts the questions.
class PendingPodsAnswer final : public ClaimResolver {
 public:
  explicit PendingPodsAnswer(PendingPods answer) : answer_(std::move(answer)) {}
  ResolvedClaim resolve(ClaimKind, std::string_view, std::string_view) const override { return {}; }
  PendingPods pending_pods_naming(ClaimKind kind, std::string_view ns,
                                  std::string_view name) const override {
    asked.push_back(std::string(kind == ClaimKind::kTemplate ? "t/" : "c/") + std::string(ns) +
                    "/" + std::string(name));
    return answer_;
  }
  mutable std::vector<std::string> asked;

 private:
  PendingPods answer_;
};

TEST_CASE("GPU023: a claim created under the name a Pod not scheduled yet waits for",
          "[rules][dra]") {
  const auto rule = make_dra_unresolved_claim_rule();
  const std::string gpu_claim =
      claim(R"([{"name": "g", "exactly": {"deviceClassName": "l4.example.com", "count": 1}}])");
  const std::string tmpl = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
      "metadata": {"name": "t"}, "spec": {"spec": {"devices": {"requests": [
        {"name": "g", "exactly": {"deviceClassName": "l4.example.com"}}]}}}})";
  const std::string cpu_claim =
      claim(R"([{"name": "n", "exactly": {"deviceClassName": "nic.example.com"}}])");
  const PendingPods none{PendingPodsLookup::kListed, {}, {}};
  const PendingPods one{PendingPodsLookup::kListed, {"p"}, {}};
  const PendingPods five{PendingPodsLookup::kListed, {"p1", "p2", "p3", "p4", "p5"}, {}};
  const PendingPods down{PendingPodsLookup::kUnavailable, {}, "listing Pods: no answer"};
  const PendingPods not_asked{};
  struct Case {
    const char* name;
    const std::string& object;
    const PendingPods& pods;
    Lines want;
    std::vector<std::string> asked;
  };
  const std::vector<Case> cases = {
      {"one Pod waits",
       gpu_claim,
       one,
       {"metadata.name: ResourceClaim c replaces the one Pod p of namespace web was admitted with "
        "(not scheduled yet, it names it): gpuadmit counted that Pod's GPUs with the earlier "
        "ResourceClaim, and the scheduler would give it this one; delete the Pod first, or "
        "create this ResourceClaim under another name"},
       {"c/web/c"}},
      {"five Pods wait for a template",
       tmpl,
       five,
       {"metadata.name: ResourceClaimTemplate t replaces the one Pods p1, p2, p3 and 2 more of "
        "namespace web were admitted with (not scheduled yet, they name it): gpuadmit counted "
        "their GPUs with the earlier ResourceClaimTemplate, and the scheduler would give them "
        "this one; delete those Pods first, or create this ResourceClaimTemplate under another "
        "name"},
       {"t/web/t"}},
      {"no Pod waits", gpu_claim, none, {}, {"c/web/c"}},
      {"the Pods cannot be listed",
       gpu_claim,
       down,
       {"metadata.name: ResourceClaim c: gpuadmit could not list the Pods of namespace web not "
        "scheduled yet (listing Pods: no answer), so it cannot tell whether this ResourceClaim "
        "replaces one a Pod was admitted with: create it again once the webhook can list them "
        "(serve --dra-lookup, with list on pods: docs/dra.md)"},
       {"c/web/c"}},
      {"lint, or the lookup off: not asked", gpu_claim, not_asked, {}, {"c/web/c"}},
      {"no GPU request: never asked", cpu_claim, one, {}, {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const PendingPodsAnswer cluster(c.pods);
    CHECK(check(*rule, c.object, "web", &cluster) == c.want);
    CHECK(cluster.asked == c.asked);
  }
  // Without a resolver (no lookup at all): nothing.
  CHECK(check(*rule, gpu_claim, "web").empty());
}

TEST_CASE("GPU023: a GPU claim naming a controller is believed only from that controller",
          "[rules][dra]") {
  const auto rule = make_dra_unresolved_claim_rule();
  auto owned = [](std::string_view owner, std::string_view device_class) {
    return std::string(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
      "metadata": {"name": "mine", "ownerReferences": [)") +
           std::string(owner) + R"(]}, "spec": {"devices": {"requests": [
        {"name": "g", "exactly": {"deviceClassName": ")" +
           std::string(device_class) + R"(", "count": 1}}]}}})";
  };
  const std::string pod_owner =
      R"({"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-1", "controller": true})";
  const std::string deployment_owner =
      R"({"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u-2", "controller": true})";
  const std::string not_controller =
      R"({"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-1"})";
  const std::string pod_message =
      "metadata.ownerReferences: ResourceClaim mine names Pod p as its controller, but only "
      "Kubernetes' resource-claim controller makes a Pod's claims";
  const std::string tail =
      ": the scheduler gives a claim to the Pod whose uid its controller reference carries, in "
      "place of the claim gpuadmit counted for that Pod; remove the ownerReference and name the "
      "claim in a Pod's resourceClaims";
  struct Case {
    const char* name;
    std::string object;
    std::string_view username;
    Lines want;
  };
  const std::vector<Case> cases = {
      {"a tenant's claim owned by a Pod",
       owned(pod_owner, "l4.example.com"),
       "alice",
       {pod_message + tail}},
      {"lint: no sender", owned(pod_owner, "l4.example.com"), "", {pod_message + tail}},
      {"the resource-claim controller",
       owned(pod_owner, "l4.example.com"),
       "system:serviceaccount:kube-system:resource-claim-controller",
       {}},
      {"kube-controller-manager's own user",
       owned(pod_owner, "l4.example.com"),
       "system:kube-controller-manager",
       {}},
      {"another kind, not sent by its controller",
       owned(deployment_owner, "l4.example.com"),
       "alice",
       {"metadata.ownerReferences: ResourceClaim mine names Deployment d as its controller, but "
        "that kind's controller did not send it" +
        tail}},
      {"another kind, sent by its controller",
       owned(deployment_owner, "l4.example.com"),
       "system:serviceaccount:kube-system:deployment-controller",
       {}},
      {"an owner that is not the controller", owned(not_controller, "l4.example.com"), "alice", {}},
      {"no GPU request", owned(pod_owner, "nic.example.com"), "alice", {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(check(*rule, c.object, "web", nullptr, c.username) == c.want);
  }
}

}  // namespace
}  // namespace dra_rules_test
}  // namespace gpuadmit
