#pragma once
// Test-only: the admissionregistration, rbac and discovery parts of a Kubernetes API server, for
// kube/webhook_registration.h and `gpuadmit register` (tests/kube/webhook_registration_test.cpp,
// register_command_test.cpp). It stores objects as the real one does: a resourceVersion per
// write, 409 on a stale one, Kubernetes' defaults added and empty lists dropped, DELETE with a uid
// precondition, labelled lists; it serves the owner ClusterRole and the webhook Service's
// EndpointSlices, and records every request.

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/json.h"
#include "tests/kube/test_api_server.h"

namespace gpuadmit::testing {

inline const std::string kGroup = "/apis/admissionregistration.k8s.io/v1/";
inline const std::string kOwnerPath = "/apis/rbac.authorization.k8s.io/v1/clusterroles/gpuadmit";
inline const std::string kSlices = "/apis/discovery.k8s.io/v1/namespaces/gpuadmit/endpointslices";

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
  enum class Endpoints { kNone, kNotReady, kReady };
  void set_endpoints(Endpoints e) {
    std::lock_guard<std::mutex> lock(mutex_);
    endpoints_ = e;
  }
  // Every webhook stored from now on gets `futureField: value`, a default gpuadmit cannot know.
  void set_future_default(const std::string& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    future_default_ = value;
  }
  // Deleted by someone else (kubectl delete).
  void remove(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_.erase(path);
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

  // What the API server's defaulting adds, listed here from Kubernetes' source independently of
  // kube/admission_defaults.cc (pkg/apis/admissionregistration/v1/defaults.go: a webhook's
  // failurePolicy, matchPolicy, selectors, timeoutSeconds 10, reinvocationPolicy, service port,
  // rule scope; v1beta1/defaults.go: a policy's failurePolicy, MatchResources' matchPolicy and
  // selectors), and an empty list dropped (omitempty); plus, when set, a field no Kubernetes
  // release defaults today, as a later one might.
  void add_defaults(Json& object) const {
    const auto fill = [](Json& o, const char* key, const Json& value) {
      if (!o.contains(key)) o[key] = value;
    };
    const auto match_resources = [&](Json& m) {
      fill(m, "matchPolicy", "Equivalent");
      fill(m, "namespaceSelector", Json::object());
      fill(m, "objectSelector", Json::object());
      if (m.contains("resourceRules")) {
        for (Json& rule : m["resourceRules"]) fill(rule, "scope", "*");
      }
    };
    const std::string kind = object["kind"];
    if (object.contains("spec")) {
      Json& spec = object["spec"];
      if (kind == "ValidatingAdmissionPolicy" || kind == "MutatingAdmissionPolicy") {
        fill(spec, "failurePolicy", "Fail");
        if (spec.contains("matchConstraints")) match_resources(spec["matchConstraints"]);
      }
      if (spec.contains("matchResources")) match_resources(spec["matchResources"]);
      if (spec.contains("matchConditions") && spec["matchConditions"].empty()) {
        spec.erase("matchConditions");
      }
    }
    if (!object.contains("webhooks")) return;
    for (Json& w : object["webhooks"]) {
      fill(w, "failurePolicy", "Fail");
      fill(w, "matchPolicy", "Equivalent");
      fill(w, "namespaceSelector", Json::object());
      fill(w, "objectSelector", Json::object());
      fill(w, "timeoutSeconds", 10);
      if (kind == "MutatingWebhookConfiguration") fill(w, "reinvocationPolicy", "Never");
      if (w["clientConfig"].contains("service")) fill(w["clientConfig"]["service"], "port", 443);
      for (Json& rule : w["rules"]) fill(rule, "scope", "*");
      if (w.contains("matchConditions") && w["matchConditions"].empty()) w.erase("matchConditions");
      if (!future_default_.empty()) fill(w, "futureField", future_default_);
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
    if (req.path == kSlices) {
      if (!req.has_param("labelSelector") ||
          req.get_param_value("labelSelector") != "kubernetes.io/service-name=gpuadmit") {
        return reply(400, status(400, "BadRequest", "unexpected selector"));
      }
      return reply(200, endpoint_slices());
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

  // The webhook Service's EndpointSlices (discovery.k8s.io/v1) as the EndpointSlice controller
  // writes them: none before the Service has Pods, an endpoint not ready while its Pod is not.
  Json endpoint_slices() const {
    Json items = Json::array();
    if (endpoints_ != Endpoints::kNone) {
      items.push_back(
          {{"metadata",
            {{"name", "gpuadmit-x7k2p"}, {"labels", {{"kubernetes.io/service-name", "gpuadmit"}}}}},
           {"addressType", "IPv4"},
           {"endpoints",
            {{{"addresses", {"10.0.0.7"}},
              {"conditions", {{"ready", endpoints_ == Endpoints::kReady}}}}}}});
    }
    return Json{{"kind", "EndpointSliceList"}, {"metadata", {{"continue", ""}}}, {"items", items}};
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
  Endpoints endpoints_ = Endpoints::kReady;
  std::string future_default_;
  int version_ = 100;
  std::map<std::string, Json> objects_;
  std::set<std::string> unserved_;
  bool conflict_next_put_ = false;
  std::vector<std::string> requests_;
  TestApiServer server_;  // last: stopped before the members its handler reads go
};

}  // namespace gpuadmit::testing
