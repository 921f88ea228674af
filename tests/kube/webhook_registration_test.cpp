// kube/webhook_registration.h and `gpuadmit register` against a simulated API server that
// stores admissionregistration.k8s.io objects as the real one does (a resourceVersion per write,
// 409 on a stale one, Kubernetes' defaults added, empty lists dropped) and serves the webhook
// Service's EndpointSlices: the configurations are created only once the Service has a ready
// endpoint, are `gpuadmit render`'s, are owned by the release's ClusterRole (so the garbage
// collector deletes them with it), carry the policy's generation and digest, are left alone when
// the cluster's copy only differs by defaults, are put back when anything gpuadmit owns was
// changed (an added matchConditions entry, an extra rule), and are never touched when annotated
// break-glass or written for a newer policy generation.

#include "kube/webhook_registration.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/json.h"
#include "kube/admission_defaults.h"
#include "tests/kube/fake_registry.h"

namespace webhook_registration_test {

using namespace gpuadmit::testing;
using gpuadmit::Json;
using gpuadmit::kube::RegistrationResult;
using gpuadmit::kube::WebhookRegistration;
using gpuadmit::kube::WebhookRegistrationConfig;

namespace {

Json configuration(const std::string& kind, const std::string& excluded) {
  return Json::parse(
      R"({"apiVersion": "admissionregistration.k8s.io/v1", "kind": ")" + kind +
      R"(", "metadata": {"name": "gpuadmit", "labels": {"app.kubernetes.io/name": "gpuadmit"}},
    "webhooks": [{"name": "x.gpuadmit.io", "admissionReviewVersions": ["v1"],
      "clientConfig": {"service": {"namespace": "gpuadmit", "name": "gpuadmit", "path": "/x", "port": 443}, "caBundle": "Q0E="},
      "rules": [{"apiGroups": [""], "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["pods"]}],
      "failurePolicy": "Fail", "matchPolicy": "Equivalent",
      "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [)" +
      excluded + R"(]}]},
      "sideEffects": "None", "timeoutSeconds": 2}]})");
}

struct Fixture {
  TempDir dir;
  FakeRegistry api{dir.path()};
  WebhookRegistrationConfig config;
  Fixture() {
    std::ofstream(dir / "token") << "sa-token\n";
    config.access.host = "127.0.0.1";
    config.access.port = api.port();
    config.access.ca_path = api.ca_path();
    config.access.token_path = dir / "token";
    config.timeout = std::chrono::milliseconds(5000);
    config.owner_cluster_role = "gpuadmit";
  }
};

const std::string kMutating = kGroup + "mutatingwebhookconfigurations/gpuadmit";
const std::string kValidating = kGroup + "validatingwebhookconfigurations/gpuadmit";

const gpuadmit::kube::PolicyStamp kStamp{3, "sha256:abc"};

// Applies `desired` and expects one step for every object.
RegistrationResult apply_all(WebhookRegistration& registration, const std::vector<Json>& desired,
                             const gpuadmit::kube::PolicyStamp& stamp = kStamp) {
  RegistrationResult r = registration.apply(desired, stamp);
  INFO(Json(r.errors).dump());
  CHECK(r.created.size() + r.updated.size() + r.unchanged.size() + r.break_glass.size() +
            r.newer.size() + r.waiting.size() + r.errors.size() ==
        desired.size());
  return r;
}

bool any_put(const FakeRegistry& api) {
  for (const std::string& req : api.requests()) {
    if (req.rfind("PUT", 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE(
    "webhook registration: created with owner and stamp, unchanged when only defaults differ") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const std::vector<Json> desired = {
      configuration("MutatingWebhookConfiguration", R"("gpuadmit", "kube-system")"),
      configuration("ValidatingWebhookConfiguration", R"("gpuadmit", "kube-system")")};
  RegistrationResult r = apply_all(registration, desired);
  CHECK(r.errors.empty());
  CHECK(r.created == std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit",
                                              "ValidatingWebhookConfiguration gpuadmit"});
  const Json stored = *f.api.stored(kMutating);
  CHECK(stored["webhooks"][0]["namespaceSelector"] ==
        desired[0]["webhooks"][0]["namespaceSelector"]);
  CHECK(stored["metadata"]["ownerReferences"] ==
        Json::parse(R"([{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "name": "gpuadmit", "uid": "owner-uid-1"}])"));
  CHECK(stored["metadata"]["annotations"] == Json::parse(R"({"gpuadmit.io/policy-generation": "3",
                        "gpuadmit.io/policy-hash": "sha256:abc"})"));
  // Defaulted by the server: gpuadmit does not set them.
  CHECK(stored["webhooks"][0]["objectSelector"] == Json::object());
  CHECK(stored["webhooks"][0]["reinvocationPolicy"] == "Never");
  CHECK(stored["webhooks"][0]["rules"][0]["scope"] == "*");

  r = apply_all(registration, desired);
  CHECK(r.unchanged.size() == 2);
  CHECK_FALSE(any_put(f.api));
}

// Issue 34 point 10: "unchanged" used to mean desired ⊆ actual, so whatever was added beside
// gpuadmit's fields stayed. Each of these edits turns the webhook off or widens its gap; each is
// put back whole, and what others put in metadata is kept.
TEST_CASE("webhook registration: anything added to or changed in what gpuadmit owns is put back") {
  struct Edit {
    const char* what;
    std::function<void(Json&)> change;
  };
  const std::vector<Edit> edits = {
      {"a matchConditions entry that is always false",
       [](Json& o) {
         o["webhooks"][0]["matchConditions"] =
             Json::parse(R"([{"name": "off", "expression": "false"}])");
       }},
      {"an extra rule",
       [](Json& o) {
         o["webhooks"][0]["rules"].push_back(Json::parse(
             R"({"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["DELETE"],
                 "resources": ["deployments"], "scope": "*"})"));
       }},
      {"a second webhook",
       [](Json& o) {
         Json copy = o["webhooks"][0];
         copy["name"] = "y.gpuadmit.io";
         o["webhooks"].push_back(copy);
       }},
      {"another namespace excluded",
       [](Json& o) {
         o["webhooks"][0]["namespaceSelector"]["matchExpressions"][0]["values"].push_back("ml");
       }},
      {"an objectSelector",
       [](Json& o) {
         o["webhooks"][0]["objectSelector"] =
             Json::parse(R"({"matchLabels": {"team": "platform"}})");
       }},
      {"failurePolicy Ignore", [](Json& o) { o["webhooks"][0]["failurePolicy"] = "Ignore"; }},
      {"the owner removed", [](Json& o) { o["metadata"].erase("ownerReferences"); }},
      {"an older generation",
       [](Json& o) { o["metadata"]["annotations"]["gpuadmit.io/policy-generation"] = "2"; }}};
  for (const Edit& edit : edits) {
    INFO(edit.what);
    Fixture f;
    WebhookRegistration registration(f.config);
    const std::vector<Json> desired = {
        configuration("MutatingWebhookConfiguration", R"("gpuadmit", "kube-system")")};
    REQUIRE(apply_all(registration, desired).created.size() == 1);
    const Json first = *f.api.stored(kMutating);
    f.api.edit(kMutating, [&](Json& o) {
      edit.change(o);
      o["metadata"]["annotations"]["team"] = "platform";
      o["metadata"]["labels"]["team"] = "platform";
    });
    RegistrationResult r = apply_all(registration, desired);
    CHECK(r.updated == std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit"});
    Json stored = *f.api.stored(kMutating);
    CHECK(stored["webhooks"] == first["webhooks"]);
    CHECK(stored["metadata"]["ownerReferences"] == first["metadata"]["ownerReferences"]);
    CHECK(stored["metadata"]["annotations"]["gpuadmit.io/policy-generation"] == "3");
    CHECK(stored["metadata"]["annotations"]["team"] == "platform");
    CHECK(stored["metadata"]["labels"]["team"] == "platform");
    CHECK(apply_all(registration, desired).unchanged.size() == 1);
  }
}

TEST_CASE("webhook registration: a new policy's selector is written") {
  Fixture f;
  WebhookRegistration registration(f.config);
  REQUIRE(apply_all(registration, {configuration("MutatingWebhookConfiguration", R"("gpuadmit")")})
              .created.size() == 1);
  const std::vector<Json> next = {
      configuration("MutatingWebhookConfiguration", R"("batch", "gpuadmit", "kube-system")")};
  const RegistrationResult r = apply_all(registration, next, {4, "sha256:def"});
  CHECK(r.updated.size() == 1);
  const Json stored = *f.api.stored(kMutating);
  CHECK(stored["webhooks"][0]["namespaceSelector"] == next[0]["webhooks"][0]["namespaceSelector"]);
  CHECK(stored["metadata"]["annotations"]["gpuadmit.io/policy-hash"] == "sha256:def");
}

// A Kubernetes release that defaults a field gpuadmit does not know: the stored object differs
// from what gpuadmit renders, yet is what the API server makes of it. Written once, not again
// every round.
TEST_CASE("webhook registration: a default gpuadmit does not know is written once, then left") {
  Fixture f;
  f.api.set_future_default("on");
  WebhookRegistration registration(f.config);
  const std::vector<Json> desired = {
      configuration("ValidatingWebhookConfiguration", R"("gpuadmit")")};
  REQUIRE(apply_all(registration, desired).created.size() == 1);
  CHECK(f.api.stored(kValidating)->at("webhooks")[0]["futureField"] == "on");
  CHECK(apply_all(registration, desired).unchanged.size() == 1);
  CHECK(apply_all(registration, desired).unchanged.size() == 1);
  CHECK_FALSE(any_put(f.api));
  // Someone changes it: put back (and the server defaults it again).
  f.api.edit(kValidating, [](Json& o) { o["webhooks"][0]["futureField"] = "off"; });
  CHECK(apply_all(registration, desired).updated.size() == 1);
  CHECK(apply_all(registration, desired).unchanged.size() == 1);
}

TEST_CASE("webhook registration: without its owner nothing is written") {
  Fixture f;
  f.api.set_owner(false);
  WebhookRegistration registration(f.config);
  const RegistrationResult r = registration.apply(
      {configuration("ValidatingWebhookConfiguration", R"("gpuadmit")")}, kStamp);
  CHECK(r.errors == std::vector<std::string>{
                        "the owner ClusterRole gpuadmit: the API server answered 404 (NotFound): "
                        "clusterroles.rbac.authorization.k8s.io \"gpuadmit\" not found"});
  CHECK_FALSE(f.api.stored(kValidating).has_value());
}

// docs/install.md, "No install window": the API server must never hold a webhook configuration
// whose Service cannot answer. An existing configuration is still repaired meanwhile.
TEST_CASE("webhook registration: created only once the webhook's Service has a ready endpoint") {
  Fixture f;
  f.config.service_namespace = "gpuadmit";
  f.config.service_name = "gpuadmit";
  WebhookRegistration registration(f.config);
  const std::vector<Json> desired = {
      configuration("MutatingWebhookConfiguration", R"("gpuadmit")"),
      configuration("ValidatingWebhookConfiguration", R"("gpuadmit")")};
  f.api.set_endpoints(FakeRegistry::Endpoints::kNone);
  RegistrationResult r = apply_all(registration, desired);
  CHECK(r.waiting == std::vector<std::string>{
                         "MutatingWebhookConfiguration gpuadmit: Service gpuadmit/gpuadmit has no "
                         "ready endpoint (0 EndpointSlices)",
                         "ValidatingWebhookConfiguration gpuadmit: Service gpuadmit/gpuadmit has "
                         "no ready endpoint (0 EndpointSlices)"});
  f.api.set_endpoints(FakeRegistry::Endpoints::kNotReady);
  r = apply_all(registration, desired);
  CHECK(r.waiting.size() == 2);
  CHECK(r.waiting[0] ==
        "MutatingWebhookConfiguration gpuadmit: Service gpuadmit/gpuadmit has no ready endpoint "
        "(1 EndpointSlice)");
  CHECK_FALSE(f.api.stored(kMutating).has_value());
  CHECK_FALSE(f.api.stored(kValidating).has_value());

  f.api.set_endpoints(FakeRegistry::Endpoints::kReady);
  r = apply_all(registration, desired);
  CHECK(r.created.size() == 2);
  CHECK(r.waiting.empty());

  // Every Pod gone: an edit is still put back (only a create waits).
  f.api.set_endpoints(FakeRegistry::Endpoints::kNone);
  f.api.edit(kMutating, [](Json& o) { o["webhooks"][0]["failurePolicy"] = "Ignore"; });
  r = apply_all(registration, desired);
  CHECK(r.updated == std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit"});
  CHECK(r.unchanged == std::vector<std::string>{"ValidatingWebhookConfiguration gpuadmit"});
}

// docs/install.md, "Break glass": an operator's emergency edit of a configuration is not undone.
TEST_CASE("webhook registration: an object annotated break-glass is left alone until it is not") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const std::vector<Json> desired = {
      configuration("MutatingWebhookConfiguration", R"("gpuadmit")")};
  REQUIRE(apply_all(registration, desired).created.size() == 1);
  f.api.edit(kMutating, [](Json& o) {
    o["metadata"]["annotations"]["gpuadmit.io/break-glass"] = "true";
    o["webhooks"][0]["failurePolicy"] = "Ignore";
  });
  RegistrationResult r = apply_all(registration, desired, {9, "sha256:new"});
  CHECK(r.break_glass == std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit"});
  CHECK(f.api.stored(kMutating)->at("webhooks")[0]["failurePolicy"] == "Ignore");
  CHECK_FALSE(any_put(f.api));
  // Any other value is not break glass.
  f.api.edit(kMutating,
             [](Json& o) { o["metadata"]["annotations"]["gpuadmit.io/break-glass"] = "false"; });
  r = apply_all(registration, desired);
  CHECK(r.updated.size() == 1);
  CHECK(f.api.stored(kMutating)->at("webhooks")[0]["failurePolicy"] == "Fail");
}

// One writer decides (docs/install.md, "One writer"): a registrar whose policy is older than the
// one that wrote an object leaves it alone; equal or older generations are overwritten.
TEST_CASE("webhook registration: an object written for a newer policy generation is not undone") {
  Fixture f;
  WebhookRegistration registration(f.config);
  std::vector<Json> desired = {configuration("MutatingWebhookConfiguration", R"("gpuadmit")")};
  REQUIRE(apply_all(registration, desired, {5, "sha256:five"}).created.size() == 1);

  // A registrar still on generation 4 (its ConfigMap not synced yet): nothing written.
  desired[0]["webhooks"][0]["timeoutSeconds"] = 9;
  RegistrationResult r = apply_all(registration, desired, {4, "sha256:four"});
  CHECK(r.newer ==
        std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit (generation 5)"});
  CHECK(f.api.stored(kMutating)->at("webhooks")[0]["timeoutSeconds"] == 2);
  CHECK_FALSE(any_put(f.api));

  // The same generation (another text, e.g. a comment): written, the single writer decides.
  r = apply_all(registration, desired, {5, "sha256:five-b"});
  CHECK(r.updated.size() == 1);
  CHECK(f.api.stored(kMutating)->at("webhooks")[0]["timeoutSeconds"] == 9);
  // A stamp that is not a number counts as 0.
  f.api.edit(kMutating, [](Json& o) {
    o["metadata"]["annotations"]["gpuadmit.io/policy-generation"] = "latest";
    o["webhooks"][0]["timeoutSeconds"] = 2;
  });
  CHECK(apply_all(registration, desired, {0, "sha256:zero"}).updated.size() == 1);
}

TEST_CASE("webhook registration: the REST collection of each admissionregistration kind") {
  using gpuadmit::kube::admission_collection;
  const std::string g = "admissionregistration.k8s.io/";
  const std::string apis = "/apis/admissionregistration.k8s.io/";
  struct Case {
    std::string version, kind, collection;  // collection "": not a kind gpuadmit registers
  };
  const std::vector<Case> cases = {
      {"v1", "MutatingWebhookConfiguration", "v1/mutatingwebhookconfigurations"},
      {"v1", "ValidatingWebhookConfiguration", "v1/validatingwebhookconfigurations"},
      {"v1", "ValidatingAdmissionPolicy", "v1/validatingadmissionpolicies"},
      {"v1", "ValidatingAdmissionPolicyBinding", "v1/validatingadmissionpolicybindings"},
      {"v1", "MutatingAdmissionPolicy", "v1/mutatingadmissionpolicies"},
      {"v1beta1", "MutatingAdmissionPolicy", "v1beta1/mutatingadmissionpolicies"},
      {"v1beta1", "MutatingAdmissionPolicyBinding", "v1beta1/mutatingadmissionpolicybindings"},
      // v1beta1 webhook configurations were removed in 1.22; other versions are not ours.
      {"v1beta1", "MutatingWebhookConfiguration", ""},
      {"v1alpha1", "MutatingAdmissionPolicy", ""},
      {"v1", "PriorityClass", ""},
  };
  for (const Case& c : cases) {
    INFO(c.version << " " << c.kind);
    const std::optional<std::string> collection = admission_collection(g + c.version, c.kind);
    if (c.collection.empty()) {
      CHECK_FALSE(collection);
    } else {
      CHECK(collection == apis + c.collection);
    }
  }
  CHECK_FALSE(admission_collection("rbac.authorization.k8s.io/v1", "ClusterRole"));
}

namespace {

const std::string kVap = kGroup + "validatingadmissionpolicies/gpuadmit-no-tenant-deny";
const std::string kVapBinding =
    kGroup + "validatingadmissionpolicybindings/gpuadmit-no-tenant-deny";
const std::string kMapBeta =
    "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies/gpuadmit-no-tenant";

Json native_object(const std::string& api_version, const std::string& kind, const std::string& name,
                   Json spec) {
  return Json{
      {"apiVersion", api_version},
      {"kind", kind},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"app.kubernetes.io/managed-by", "gpuadmit"}, {"gpuadmit.io/owner", "gpuadmit"}}}}},
      {"spec", std::move(spec)}};
}

Json deny_policy(const std::string& expression) {
  return native_object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy",
                       "gpuadmit-no-tenant-deny",
                       {{"matchConstraints",
                         {{"resourceRules", Json::array({{{"apiGroups", {""}},
                                                          {"apiVersions", {"v1"}},
                                                          {"operations", {"CREATE"}},
                                                          {"resources", {"pods"}}}})}}},
                        {"validations", Json::array({{{"expression", expression}}})}});
}

Json deny_binding() {
  return native_object(
      "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding",
      "gpuadmit-no-tenant-deny",
      {{"policyName", "gpuadmit-no-tenant-deny"},
       {"validationActions", {"Deny"}},
       {"matchResources", {{"namespaceSelector", {{"matchLabels", {{"a", "b"}}}}}}}});
}

const std::vector<gpuadmit::kube::AdmissionKind> kNativeKinds = {
    {"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"},
    {"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"},
    {"admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"}};
const std::string kSelector = "app.kubernetes.io/managed-by=gpuadmit,gpuadmit.io/owner=gpuadmit";

}  // namespace

TEST_CASE("native registration: created, unchanged when defaulted, put back, 409 next round") {
  Fixture f;
  WebhookRegistration registration(f.config);
  std::vector<Json> desired = {deny_policy("object.spec.hostPID != true"), deny_binding()};
  RegistrationResult r = apply_all(registration, desired);
  CHECK(r.errors.empty());
  CHECK(r.created ==
        std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-no-tenant-deny",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-no-tenant-deny"});
  const Json stored = *f.api.stored(kVap);
  CHECK(stored["spec"]["failurePolicy"] == "Fail");  // defaulted by the server
  CHECK(stored["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent");
  CHECK(stored["metadata"]["ownerReferences"][0]["uid"] == "owner-uid-1");
  CHECK(f.api.stored(kVapBinding)->at("spec")["policyName"] == "gpuadmit-no-tenant-deny");
  CHECK(f.api.stored(kVapBinding)->at("spec")["matchResources"]["objectSelector"] ==
        Json::object());

  r = apply_all(registration, desired);  // only the defaults differ: nothing written
  CHECK(r.unchanged.size() == 2);
  CHECK(r.updated.empty());

  // Someone edits the policy, or adds a match condition to the binding: put back, the
  // annotation they added kept.
  f.api.edit(kVap, [](Json& o) {
    o["spec"]["validations"][0]["expression"] = "true";
    o["metadata"]["annotations"]["team"] = "platform";
  });
  f.api.edit(kVapBinding, [](Json& o) {
    o["spec"]["matchResources"]["excludeResourceRules"] = Json::parse(
        R"([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
             "resources": ["pods"], "scope": "*"}])");
  });
  r = apply_all(registration, desired);
  CHECK(r.updated ==
        std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-no-tenant-deny",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-no-tenant-deny"});
  CHECK(f.api.stored(kVap)->at("spec")["validations"][0]["expression"] ==
        "object.spec.hostPID != true");
  CHECK(f.api.stored(kVap)->at("metadata")["annotations"]["team"] == "platform");
  CHECK_FALSE(
      f.api.stored(kVapBinding)->at("spec")["matchResources"].contains("excludeResourceRules"));

  // A new policy, and another writer between the GET and the PUT: 409, written next round.
  desired[0] = deny_policy("object.spec.hostNetwork != true");
  f.api.conflict_next_put();
  r = apply_all(registration, desired);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].rfind("ValidatingAdmissionPolicy gpuadmit-no-tenant-deny: PUT "
                          "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/"
                          "gpuadmit-no-tenant-deny: the API server answered 409 (Conflict)",
                          0) == 0);
  CHECK(f.api.stored(kVap)->at("spec")["validations"][0]["expression"] ==
        "object.spec.hostPID != true");
  r = apply_all(registration, desired);
  CHECK(r.errors.empty());
  CHECK(r.updated == std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-no-tenant-deny"});
  CHECK(f.api.stored(kVap)->at("spec")["validations"][0]["expression"] ==
        "object.spec.hostNetwork != true");
}

TEST_CASE("native registration: a MutatingAdmissionPolicy in v1beta1 goes to the v1beta1 path") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const Json map = native_object("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy",
                                 "gpuadmit-no-tenant", {{"reinvocationPolicy", "IfNeeded"}});
  CHECK(apply_all(registration, {map}).created ==
        std::vector<std::string>{"MutatingAdmissionPolicy gpuadmit-no-tenant"});
  CHECK(f.api.stored(kMapBeta).has_value());
  const RegistrationResult r = registration.apply(
      {native_object("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicy", "x", {})},
      kStamp);
  CHECK(r.errors == std::vector<std::string>{
                        "MutatingAdmissionPolicy x: not an admissionregistration.k8s.io object "
                        "gpuadmit registers: admissionregistration.k8s.io/v1alpha1"});
}

TEST_CASE("native registration: prune deletes this release's objects no longer rendered") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const std::string bindings = kGroup + "validatingadmissionpolicybindings/";
  // A removed tenant's binding (ours), another release's, one nobody labelled, and two of ours
  // that must stay: one annotated break-glass, one written by a newer policy.
  auto binding = [&](const std::string& name, const std::function<void(Json&)>& change) {
    Json b = deny_binding();
    b["metadata"]["name"] = name;
    change(b);
    f.api.put(bindings + name, b);
  };
  binding("gpuadmit-ml-team-deny", [](Json&) {});
  binding("other-ml-team-deny",
          [](Json& b) { b["metadata"]["labels"]["gpuadmit.io/owner"] = "other"; });
  binding("hand-made", [](Json& b) { b["metadata"].erase("labels"); });
  binding("gpuadmit-held-deny",
          [](Json& b) { b["metadata"]["annotations"]["gpuadmit.io/break-glass"] = "true"; });
  binding("gpuadmit-next-deny",
          [](Json& b) { b["metadata"]["annotations"]["gpuadmit.io/policy-generation"] = "4"; });

  const std::vector<Json> desired = {deny_policy("object.spec.hostPID != true"), deny_binding()};
  REQUIRE(apply_all(registration, desired).errors.empty());
  f.api.unserve("/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies");
  RegistrationResult r = registration.prune(kNativeKinds, kSelector, desired, kStamp);
  CHECK(r.errors.empty());
  CHECK(r.deleted ==
        std::vector<std::string>{"ValidatingAdmissionPolicyBinding gpuadmit-ml-team-deny"});
  CHECK(r.break_glass ==
        std::vector<std::string>{"ValidatingAdmissionPolicyBinding gpuadmit-held-deny"});
  CHECK(r.newer == std::vector<std::string>{
                       "ValidatingAdmissionPolicyBinding gpuadmit-next-deny (generation 4)"});
  CHECK_FALSE(f.api.stored(bindings + "gpuadmit-ml-team-deny").has_value());
  for (const char* kept : {"other-ml-team-deny", "hand-made", "gpuadmit-held-deny",
                           "gpuadmit-next-deny", "gpuadmit-no-tenant-deny"}) {
    INFO(kept);
    CHECK(f.api.stored(bindings + kept).has_value());
  }
  CHECK(f.api.stored(kVap).has_value());

  // Nothing left to delete: a second prune deletes nothing; the newer policy's generation
  // catches up, and its leftover goes.
  r = registration.prune(kNativeKinds, kSelector, desired, kStamp);
  CHECK(r.deleted.empty());
  r = registration.prune(kNativeKinds, kSelector, desired, {4, "sha256:four"});
  CHECK(r.deleted ==
        std::vector<std::string>{"ValidatingAdmissionPolicyBinding gpuadmit-next-deny"});
}

// kube/admission_defaults.h: the comparison the repair relies on.
TEST_CASE("webhook registration: same_content is exact up to the API server's defaults") {
  using gpuadmit::kube::same_content;
  const Json bare =
      Json::parse(R"({"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "a"},
    "webhooks": [{"name": "w", "clientConfig": {"service": {"namespace": "n", "name": "s"}},
                  "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                             "resources": ["pods"]}], "sideEffects": "None",
                  "admissionReviewVersions": ["v1"], "matchConditions": []}]})");
  // As a v1 API server answers: every default, Go's field order, the empty list gone.
  const Json stored = Json::parse(R"({"apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "a", "uid": "u", "resourceVersion": "7"},
    "webhooks": [{"admissionReviewVersions": ["v1"], "timeoutSeconds": 10, "sideEffects": "None",
                  "objectSelector": {}, "namespaceSelector": {}, "matchPolicy": "Equivalent",
                  "failurePolicy": "Fail",
                  "rules": [{"scope": "*", "resources": ["pods"], "operations": ["CREATE"],
                             "apiVersions": ["v1"], "apiGroups": [""]}],
                  "clientConfig": {"service": {"port": 443, "name": "s", "namespace": "n"}},
                  "name": "w"}]})");
  CHECK(same_content(bare, stored));
  for (const char* edit : {R"(/webhooks/0/timeoutSeconds)", R"(/webhooks/0/rules/0/scope)",
                           R"(/webhooks/0/clientConfig/service/port)"}) {
    INFO(edit);
    Json changed = stored;
    changed[Json::json_pointer(edit)] =
        changed[Json::json_pointer(edit)].is_number() ? Json(29) : Json("Namespaced");
    CHECK_FALSE(same_content(bare, changed));
  }
  Json extra = stored;
  extra["webhooks"][0]["matchConditions"] =
      Json::parse(R"([{"name": "x", "expression": "false"}])");
  CHECK_FALSE(same_content(bare, extra));
  extra = stored;
  extra["webhooks"][0]["objectSelector"] = Json::parse(R"({"matchLabels": {"a": "b"}})");
  CHECK_FALSE(same_content(bare, extra));
  extra = stored;
  extra["extra"] = true;  // a member beside `webhooks`
  CHECK_FALSE(same_content(bare, extra));
  // A mutating webhook is defaulted reinvocationPolicy Never: IfNeeded is a difference.
  Json mutating = bare, mutating_stored = stored;
  mutating["kind"] = mutating_stored["kind"] = "MutatingWebhookConfiguration";
  mutating_stored["webhooks"][0]["reinvocationPolicy"] = "Never";
  CHECK(same_content(mutating, mutating_stored));
  mutating_stored["webhooks"][0]["reinvocationPolicy"] = "IfNeeded";
  CHECK_FALSE(same_content(mutating, mutating_stored));
}
}  // namespace webhook_registration_test
