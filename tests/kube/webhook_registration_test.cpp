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
#include <string>
#include <vector>

#include "engine/json.h"
#include "tests/kube/test_api_server.h"

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
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  static Json status(int code, const std::string& reason, const std::string& message) {
    return Json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                {"code", code},     {"reason", reason},   {"message", message}};
  }

  // What the API server's defaulting adds to a webhook (admissionregistration/v1 defaults).
  static void add_defaults(Json& object) {
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
    auto it = objects_.find(req.path);
    if (it == objects_.end()) return reply(404, status(404, "NotFound", req.path + " not found"));
    if (req.method == "GET") return reply(200, it->second);
    if (req.method == "PUT") {
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

  mutable std::mutex mutex_;
  bool owner_ = true;
  int version_ = 100;
  std::map<std::string, Json> objects_;
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
