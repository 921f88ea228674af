// kube/webhook_registration.h and `serve --register-webhooks` against a simulated API server
// that stores admissionregistration.k8s.io/v1 objects as the real one does (a resourceVersion
// per write, 409 on a stale one, defaulted fields added): the configurations are created only
// once the server is ready, are `gpuadmit render`'s, are owned by the release's ClusterRole (so
// the garbage collector deletes them with it), are left alone when the cluster's copy only
// differs by defaults, and are put back when edited.

#include "kube/webhook_registration.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/json.h"
#include "tests/kube/test_api_server.h"

namespace webhook_registration_test {

using namespace gpuadmit::testing;
using gpuadmit::Json;
using gpuadmit::kube::RegistrationResult;
using gpuadmit::kube::WebhookRegistration;
using gpuadmit::kube::WebhookRegistrationConfig;

namespace {

const std::string kGroup = "/apis/admissionregistration.k8s.io/v1/";
const std::string kOwnerPath = "/apis/rbac.authorization.k8s.io/v1/clusterroles/gpuadmit";

// The admissionregistration and rbac parts of an API server.
class FakeRegistry {
 public:
  explicit FakeRegistry(const std::string& dir)
      : server_(dir,
                [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); }) {
  }
  ~FakeRegistry() { server_.stop(); }

  int port() const { return server_.port(); }
  std::string ca_path() const { return server_.ca_path(); }

  void set_owner(bool present) {
    std::lock_guard<std::mutex> lock(mutex_);
    owner_ = present;
  }
  std::optional<Json> stored(const std::string& path) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = objects_.find(path);
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  // Someone else's write: a new resourceVersion.
  void edit(const std::string& path, const std::function<void(Json&)>& change) {
    std::lock_guard<std::mutex> lock(mutex_);
    Json& o = objects_.at(path);
    change(o);
    o["metadata"]["resourceVersion"] = std::to_string(++version_);
  }
  // The next PUT finds the object written by someone else since it was read.
  void conflict_next_put() {
    std::lock_guard<std::mutex> lock(mutex_);
    conflict_next_put_ = true;
  }
  // A collection the API server does not serve (its List answers 404).
  void unserve(const std::string& collection) {
    std::lock_guard<std::mutex> lock(mutex_);
    unserved_.insert(collection);
  }
  // Someone else's object, as the API server stores it.
  void put(const std::string& path, Json object) {
    std::lock_guard<std::mutex> lock(mutex_);
    object["metadata"]["resourceVersion"] = std::to_string(++version_);
    object["metadata"]["uid"] = "uid-" + path;
    objects_[path] = std::move(object);
  }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  static Json status(int code, const std::string& reason, const std::string& message) {
    return Json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                {"code", code},     {"reason", reason},   {"message", message}};
  }

  // What the API server's defaulting adds (admissionregistration/v1 defaults: a webhook's
  // objectSelector and rule scope, a ValidatingAdmissionPolicy's failurePolicy).
  static void add_defaults(Json& object) {
    if (object.contains("spec") && object["kind"] == "ValidatingAdmissionPolicy" &&
        !object["spec"].contains("failurePolicy")) {
      object["spec"]["failurePolicy"] = "Fail";
    }
    if (!object.contains("webhooks")) return;
    for (Json& w : object["webhooks"]) {
      if (!w.contains("objectSelector")) w["objectSelector"] = Json::object();
      for (Json& rule : w["rules"]) {
        if (!rule.contains("scope")) rule["scope"] = "*";
      }
    }
  }

  void answer(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(req.method + " " + req.path);
    auto reply = [&res](int code, const Json& body) {
      res.status = code;
      res.set_content(body.dump(), "application/json");
    };
    if (req.path == kOwnerPath) {
      if (!owner_)
        return reply(404, status(404, "NotFound",
                                 "clusterroles.rbac.authorization.k8s.io \"gpuadmit\" not found"));
      return reply(200, Json{{"kind", "ClusterRole"},
                             {"apiVersion", "rbac.authorization.k8s.io/v1"},
                             {"metadata", {{"name", "gpuadmit"}, {"uid", "owner-uid-1"}}}});
    }
    if (req.method == "POST") {
      Json object = Json::parse(req.body);
      const std::string path = req.path + "/" + object["metadata"]["name"].get<std::string>();
      if (objects_.count(path)) return reply(409, status(409, "AlreadyExists", "exists"));
      add_defaults(object);
      object["metadata"]["resourceVersion"] = std::to_string(++version_);
      object["metadata"]["uid"] = "uid-" + path;
      objects_[path] = object;
      return reply(201, object);
    }
    if (req.method == "GET" && req.has_param("limit")) {
      if (unserved_.count(req.path)) {
        return reply(404,
                     status(404, "NotFound", "the server could not find the requested resource"));
      }
      return reply(200, list(req));
    }
    auto it = objects_.find(req.path);
    if (it == objects_.end()) return reply(404, status(404, "NotFound", req.path + " not found"));
    if (req.method == "GET") return reply(200, it->second);
    if (req.method == "DELETE") {
      const Json options = Json::parse(req.body);
      if (options["preconditions"]["uid"] != it->second["metadata"]["uid"]) {
        return reply(409, status(409, "Conflict", "Precondition failed: UID in precondition"));
      }
      objects_.erase(it);
      return reply(200, status(200, "", ""));
    }
    if (req.method == "PUT") {
      if (conflict_next_put_) {  // another replica wrote between our GET and PUT
        conflict_next_put_ = false;
        it->second["metadata"]["resourceVersion"] = std::to_string(++version_);
      }
      Json object = Json::parse(req.body);
      if (object["metadata"]["resourceVersion"] != it->second["metadata"]["resourceVersion"]) {
        return reply(409, status(409, "Conflict",
                                 "the object has been modified; please apply your changes to the "
                                 "latest version and try again"));
      }
      add_defaults(object);
      object["metadata"]["resourceVersion"] = std::to_string(++version_);
      it->second = object;
      return reply(200, object);
    }
    reply(405, status(405, "MethodNotAllowed", req.method));
  }

  // A collection's List, filtered by a labelSelector of k=v terms (the only form gpuadmit sends).
  Json list(const httplib::Request& req) const {
    Json items = Json::array();
    const std::string selector = req.get_param_value("labelSelector");
    for (const auto& [path, object] : objects_) {
      if (path.rfind(req.path + "/", 0) != 0) continue;
      bool match = true;
      for (std::size_t at = 0; at < selector.size();) {
        std::size_t end = selector.find(',', at);
        if (end == std::string::npos) end = selector.size();
        const std::string term = selector.substr(at, end - at);
        const std::size_t eq = term.find('=');
        const Json labels = object["metadata"].value("labels", Json::object());
        match = match && labels.value(term.substr(0, eq), "") == term.substr(eq + 1);
        at = end + 1;
      }
      if (match) items.push_back(object);
    }
    return Json{{"kind", "List"}, {"metadata", {{"continue", ""}}}, {"items", items}};
  }

  mutable std::mutex mutex_;
  bool owner_ = true;
  int version_ = 100;
  std::map<std::string, Json> objects_;
  std::set<std::string> unserved_;
  bool conflict_next_put_ = false;
  std::vector<std::string> requests_;
  TestApiServer server_;  // last: stopped before the members its handler reads go
};

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

}  // namespace

TEST_CASE("webhook registration: created with the owner, unchanged when only defaults differ") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const std::vector<Json> desired = {
      configuration("MutatingWebhookConfiguration", R"("gpuadmit", "kube-system")"),
      configuration("ValidatingWebhookConfiguration", R"("gpuadmit", "kube-system")")};
  RegistrationResult r = registration.apply(desired);
  CHECK(r.errors.empty());
  CHECK(r.created == std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit",
                                              "ValidatingWebhookConfiguration gpuadmit"});
  const Json stored = *f.api.stored(kMutating);
  CHECK(stored["webhooks"][0]["namespaceSelector"] ==
        desired[0]["webhooks"][0]["namespaceSelector"]);
  CHECK(stored["metadata"]["ownerReferences"] ==
        Json::parse(R"([{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "name": "gpuadmit", "uid": "owner-uid-1"}])"));
  CHECK(stored["webhooks"][0]["objectSelector"] == Json::object());  // defaulted by the server

  r = registration.apply(desired);
  CHECK(r.errors.empty());
  CHECK(r.unchanged.size() == 2);
  CHECK(r.created.empty());
  CHECK(r.updated.empty());
  for (const std::string& req : f.api.requests()) CHECK(req.rfind("PUT", 0) != 0);
}

TEST_CASE("webhook registration: an edited configuration is put back, its other fields kept") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const std::vector<Json> desired = {
      configuration("MutatingWebhookConfiguration", R"("gpuadmit", "kube-system")")};
  REQUIRE(registration.apply(desired).created.size() == 1);
  f.api.edit(kMutating, [](Json& o) {
    o["webhooks"][0]["failurePolicy"] = "Ignore";
    o["metadata"]["annotations"]["team"] = "platform";
  });
  RegistrationResult r = registration.apply(desired);
  CHECK(r.errors.empty());
  CHECK(r.updated == std::vector<std::string>{"MutatingWebhookConfiguration gpuadmit"});
  const Json stored = *f.api.stored(kMutating);
  CHECK(stored["webhooks"][0]["failurePolicy"] == "Fail");
  CHECK(stored["metadata"]["annotations"]["team"] == "platform");

  // A policy that exempts another namespace: the new selector is written.
  const std::vector<Json> next = {
      configuration("MutatingWebhookConfiguration", R"("batch", "gpuadmit", "kube-system")")};
  r = registration.apply(next);
  CHECK(r.updated.size() == 1);
  CHECK(f.api.stored(kMutating)->at("webhooks")[0]["namespaceSelector"] ==
        next[0]["webhooks"][0]["namespaceSelector"]);
}

TEST_CASE("webhook registration: without its owner nothing is written") {
  Fixture f;
  f.api.set_owner(false);
  WebhookRegistration registration(f.config);
  const RegistrationResult r =
      registration.apply({configuration("ValidatingWebhookConfiguration", R"("gpuadmit")")});
  CHECK(r.errors == std::vector<std::string>{
                        "the owner ClusterRole gpuadmit: the API server answered 404 (NotFound): "
                        "clusterroles.rbac.authorization.k8s.io \"gpuadmit\" not found"});
  CHECK_FALSE(f.api.stored(kValidating).has_value());
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
      {{"policyName", "gpuadmit-no-tenant-deny"}, {"validationActions", {"Deny"}}});
}

}  // namespace

TEST_CASE("native registration: created, unchanged when defaulted, put back, 409 next round") {
  Fixture f;
  WebhookRegistration registration(f.config);
  std::vector<Json> desired = {deny_policy("object.spec.hostPID != true"), deny_binding()};
  RegistrationResult r = registration.apply(desired);
  CHECK(r.errors.empty());
  CHECK(r.created ==
        std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-no-tenant-deny",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-no-tenant-deny"});
  const Json stored = *f.api.stored(kVap);
  CHECK(stored["spec"]["failurePolicy"] == "Fail");  // defaulted by the server
  CHECK(stored["metadata"]["ownerReferences"][0]["uid"] == "owner-uid-1");
  CHECK(f.api.stored(kVapBinding)->at("spec")["policyName"] == "gpuadmit-no-tenant-deny");

  r = registration.apply(desired);  // only the default differs: nothing written
  CHECK(r.unchanged.size() == 2);
  CHECK(r.updated.empty());

  // Someone edits the policy: put back, the annotation they added kept.
  f.api.edit(kVap, [](Json& o) {
    o["spec"]["validations"][0]["expression"] = "true";
    o["metadata"]["annotations"]["team"] = "platform";
  });
  r = registration.apply(desired);
  CHECK(r.updated == std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-no-tenant-deny"});
  CHECK(f.api.stored(kVap)->at("spec")["validations"][0]["expression"] ==
        "object.spec.hostPID != true");
  CHECK(f.api.stored(kVap)->at("metadata")["annotations"]["team"] == "platform");

  // A new policy, and another writer between the GET and the PUT: 409, written next round.
  desired[0] = deny_policy("object.spec.hostNetwork != true");
  f.api.conflict_next_put();
  r = registration.apply(desired);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].rfind("ValidatingAdmissionPolicy gpuadmit-no-tenant-deny: PUT "
                          "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/"
                          "gpuadmit-no-tenant-deny: the API server answered 409 (Conflict)",
                          0) == 0);
  CHECK(f.api.stored(kVap)->at("spec")["validations"][0]["expression"] ==
        "object.spec.hostPID != true");
  r = registration.apply(desired);
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
  CHECK(registration.apply({map}).created ==
        std::vector<std::string>{"MutatingAdmissionPolicy gpuadmit-no-tenant"});
  CHECK(f.api.stored(kMapBeta).has_value());
  const RegistrationResult r = registration.apply(
      {native_object("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicy", "x", {})});
  CHECK(r.errors == std::vector<std::string>{
                        "MutatingAdmissionPolicy x: not an admissionregistration.k8s.io object "
                        "gpuadmit registers: admissionregistration.k8s.io/v1alpha1"});
}

TEST_CASE("native registration: prune deletes this release's objects no longer rendered") {
  Fixture f;
  WebhookRegistration registration(f.config);
  const std::string bindings = kGroup + "validatingadmissionpolicybindings/";
  // A removed tenant's binding (ours), another release's, and one nobody labelled.
  Json gone = deny_binding();
  gone["metadata"]["name"] = "gpuadmit-ml-team-deny";
  f.api.put(bindings + "gpuadmit-ml-team-deny", gone);
  Json other = gone;
  other["metadata"]["name"] = "other-ml-team-deny";
  other["metadata"]["labels"]["gpuadmit.io/owner"] = "other";
  f.api.put(bindings + "other-ml-team-deny", other);
  Json foreign = gone;
  foreign["metadata"]["name"] = "hand-made";
  foreign["metadata"].erase("labels");
  f.api.put(bindings + "hand-made", foreign);

  const std::vector<Json> desired = {deny_policy("object.spec.hostPID != true"), deny_binding()};
  REQUIRE(registration.apply(desired).errors.empty());
  f.api.unserve("/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies");
  const std::vector<gpuadmit::kube::AdmissionKind> kinds = {
      {"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"},
      {"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"},
      {"admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"}};
  const std::string selector = "app.kubernetes.io/managed-by=gpuadmit,gpuadmit.io/owner=gpuadmit";
  RegistrationResult r = registration.prune(kinds, selector, desired);
  CHECK(r.errors.empty());
  CHECK(r.deleted ==
        std::vector<std::string>{"ValidatingAdmissionPolicyBinding gpuadmit-ml-team-deny"});
  CHECK_FALSE(f.api.stored(bindings + "gpuadmit-ml-team-deny").has_value());
  CHECK(f.api.stored(bindings + "other-ml-team-deny").has_value());
  CHECK(f.api.stored(bindings + "hand-made").has_value());
  CHECK(f.api.stored(kVapBinding).has_value());
  CHECK(f.api.stored(kVap).has_value());
  bool deleted_with_uid = false;
  for (const std::string& req : f.api.requests()) {
    deleted_with_uid |= req == "DELETE " + bindings + "gpuadmit-ml-team-deny";
  }
  CHECK(deleted_with_uid);

  // Nothing left to delete: a second prune deletes nothing.
  r = registration.prune(kinds, selector, desired);
  CHECK(r.errors.empty());
  CHECK(r.deleted.empty());
}

TEST_CASE("webhook registration: sets_equal compares only what the desired object sets") {
  using gpuadmit::kube::sets_equal;
  CHECK(sets_equal(Json::parse(R"({"a": 1})"), Json::parse(R"({"a": 1, "b": 2})")));
  CHECK_FALSE(sets_equal(Json::parse(R"({"a": 1, "b": 2})"), Json::parse(R"({"a": 1})")));
  CHECK_FALSE(sets_equal(Json::parse(R"({"a": [1, 2]})"), Json::parse(R"({"a": [1, 2, 3]})")));
  CHECK(sets_equal(Json::parse(R"([{"x": 1}])"), Json::parse(R"([{"x": 1, "scope": "*"}])")));
  CHECK_FALSE(sets_equal(Json::parse(R"({"a": "1"})"), Json::parse(R"({"a": 1})")));
}

// The whole path: the server registers render's objects once it is ready.
TEST_CASE("serve --register-webhooks: render's configurations, written once ready") {
  TempDir webhook_dir, account;
  generate_certs(webhook_dir.path());
  FakeRegistry api(account.path());
  std::ofstream(account / "token") << "sa-token\n";
  ServerProcess server(
      webhook_dir.path(),
      {"--register-webhooks", "--webhook-service", "gpuadmit", "--webhook-namespace", "gpuadmit",
       "--webhook-ca-bundle", webhook_dir / "ca.crt", "--webhook-owner", "gpuadmit",
       "--webhook-exclude-namespace", "batch"},
      "",
      {{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
       {"KUBERNETES_SERVICE_PORT", std::to_string(api.port())},
       {"GPUADMIT_SERVICE_ACCOUNT_DIR", account.path()}});
  REQUIRE(server.wait_ready());
  bool registered = false;
  for (int i = 0; i < 1000 && !registered; ++i) {
    registered = api.stored(kMutating).has_value() && api.stored(kValidating).has_value();
    if (!registered) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(registered);
  bool logged = false;  // the log is written in batches
  for (int i = 0; i < 200 && !logged; ++i) {
    logged =
        server.log().find("\"msg\":\"webhook configurations registered\"") != std::string::npos;
    if (!logged) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(logged);
  const auto rendered = run_command(std::string(GPUADMIT_BINARY) +
                                    " render --namespace gpuadmit --service gpuadmit --ca-bundle " +
                                    (webhook_dir / "ca.crt"));
  REQUIRE(rendered.exit_code == 0);
  // render's YAML stream, through lint's reader is overkill: compare the fields that matter.
  for (const std::string& path : {kMutating, kValidating}) {
    const Json stored = *api.stored(path);
    const Json& w = stored["webhooks"][0];
    CHECK(rendered.out.find("caBundle: " + w["clientConfig"]["caBundle"].get<std::string>()) !=
          std::string::npos);
    CHECK(w["namespaceSelector"]["matchExpressions"][0]["values"] ==
          Json::array({"batch", "gpu-operator", "gpuadmit", "kube-node-lease", "kube-public",
                       "kube-system"}));
    CHECK_FALSE((w.contains("objectSelector") && !w["objectSelector"].empty()));
    CHECK(stored["metadata"]["ownerReferences"][0]["uid"] == "owner-uid-1");
  }
}

namespace {

constexpr const char* kTeamsPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: teams
spec:
  tenants:
    - name: ml
      namespaces: ["ml"]
      limits: {maxGPUsPerPod: 4}
)";

constexpr const char* kNoTenantsPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: teams
spec:
  enforcement:
    exempt:
      namespaces: ["batch"]
)";

// The paths of what a native registration of `scopes` in full mode stores.
std::vector<std::string> full_mode_paths(const std::vector<std::string>& scopes) {
  const std::string beta = "/apis/admissionregistration.k8s.io/v1beta1/";
  std::vector<std::string> out;
  for (const std::string& scope : scopes) {
    for (const char* suffix : {"-deny", "-warn"}) {
      out.push_back(kGroup + "validatingadmissionpolicies/gpuadmit-" + scope + suffix);
      out.push_back(kGroup + "validatingadmissionpolicybindings/gpuadmit-" + scope + suffix);
    }
    out.push_back(beta + "mutatingadmissionpolicies/gpuadmit-" + scope + "-mutate");
    out.push_back(beta + "mutatingadmissionpolicybindings/gpuadmit-" + scope + "-mutate");
  }
  return out;
}

// Waits (up to 20 s) until `done` holds.
bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

// The whole path: the server registers render --native's objects, and when the policy loses a
// tenant, deletes that tenant's policies and bindings.
TEST_CASE("serve --register-native: render's native policies, pruned when a tenant goes") {
  TempDir webhook_dir, account;
  generate_certs(webhook_dir.path());
  FakeRegistry api(account.path());
  std::ofstream(account / "token") << "sa-token\n";
  const std::string policy = webhook_dir / "policy.yaml";
  std::ofstream(policy) << kTeamsPolicy;
  ServerProcess server(webhook_dir.path(),
                       {"--policy", policy, "--register-native", "full", "--native-api", "v1beta1",
                        "--webhook-namespace", "gpuadmit", "--webhook-owner", "gpuadmit"},
                       "",
                       {{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
                        {"KUBERNETES_SERVICE_PORT", std::to_string(api.port())},
                        {"GPUADMIT_SERVICE_ACCOUNT_DIR", account.path()}});
  REQUIRE(server.wait_ready());
  const std::vector<std::string> both = full_mode_paths({"ml", "no-tenant"});
  REQUIRE(eventually([&] {
    for (const std::string& path : both) {
      if (!api.stored(path)) return false;
    }
    return true;
  }));
  for (const std::string& path : both) {
    const Json stored = *api.stored(path);
    CHECK(stored["metadata"]["labels"]["gpuadmit.io/owner"] == "gpuadmit");
    CHECK(stored["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuadmit");
    CHECK(stored["metadata"]["ownerReferences"][0]["uid"] == "owner-uid-1");
  }
  CHECK(api.stored(full_mode_paths({"ml"})[1])->at("spec")["policyName"] == "gpuadmit-ml-deny");
  CHECK_FALSE(api.stored(kMutating).has_value());  // no --register-webhooks: no webhooks
  CHECK_FALSE(api.stored(kValidating).has_value());

  // The tenant leaves the policy: its six objects are deleted, the others stay.
  std::ofstream(policy, std::ios::trunc) << kNoTenantsPolicy;
  REQUIRE(eventually([&] {
    for (const std::string& path : full_mode_paths({"ml"})) {
      if (api.stored(path)) return false;
    }
    return true;
  }));
  for (const std::string& path : full_mode_paths({"no-tenant"})) CHECK(api.stored(path));
  CHECK(eventually([&] {
    return server.log().find("\"msg\":\"native policies the policy no longer renders deleted\"") !=
           std::string::npos;
  }));
}

TEST_CASE("serve --register-native: flag errors") {
  TempDir dir;
  generate_certs(dir.path());
  const std::string base = std::string(GPUADMIT_BINARY) + " serve --tls-cert " + (dir / "tls.crt") +
                           " --tls-key " + (dir / "tls.key") + " ";
  struct Case {
    std::string flags, error;
  };
  for (const Case& c : std::vector<Case>{
           {"--register-native partial --webhook-namespace g --webhook-owner g",
            "gpuadmit serve: --register-native must be full or fallback, not \"partial\"\n"},
           {"--register-native full --webhook-owner g",
            "gpuadmit serve: --register-native needs --webhook-namespace\n"},
           {"--register-native full --webhook-namespace g",
            "gpuadmit serve: --register-native needs --webhook-owner\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --native-api v2",
            "gpuadmit serve: --native-api must be v1 (Kubernetes 1.36) or v1beta1 (1.34-1.35), "
            "not \"v2\"\n"},
           {"--native-api v1", "gpuadmit serve: --native-api needs --register-native\n"},
           {"--webhook-owner g",
            "gpuadmit serve: --webhook-owner needs --register-webhooks or --register-native\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --webhook-service s",
            "gpuadmit serve: --webhook-service needs --register-webhooks\n"},
       }) {
    const auto r = run_command(base + c.flags);
    CHECK(r.exit_code == 2);
    CHECK(r.err == c.error);
  }
}
}  // namespace webhook_registration_test
