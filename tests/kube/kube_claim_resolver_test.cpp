// kube/: the webhook's DRA claim lookup against a simulated Kubernetes API server — a local
// cpp-httplib HTTPS server on 127.0.0.1 with a test CA, answering with the API's response shapes
// (objects from corpus/api-fixtures, metav1.Status for errors, the APIGroup discovery document).
// No real API server runs here.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/json.h"
#include "kube/kube_claim_resolver.h"
#include "tests/kube/test_api_server.h"

namespace kube_claim_resolver_test {

using gpuadmit::ClaimKind;
using gpuadmit::ClaimLookup;
using gpuadmit::Json;
using gpuadmit::ResolvedClaim;
using namespace gpuadmit::kube;
using gpuadmit::testing::TempDir;
using gpuadmit::testing::TestApiServer;
using namespace std::chrono_literals;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path + ".new", std::ios::binary | std::ios::trunc) << text;
  std::filesystem::rename(path + ".new", path);  // as the kubelet swaps a projected token
}

const std::string kFixtures = std::string(GPUADMIT_SHARED_DIR) + "/corpus/api-fixtures/";

// metav1.Status as the API server writes it (apimachinery pkg/api/errors).
std::string status_body(int code, const std::string& reason, const std::string& message) {
  Json s = {
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", Json::object()},
      {"status", "Failure"},
      {"message", message},
      {"reason", reason},
      {"details",
       {{"name", "single-gpu"}, {"group", "resource.k8s.io"}, {"kind", "resourceclaimtemplates"}}},
      {"code", code}};
  return s.dump();
}

// GET /apis/resource.k8s.io: the APIGroup discovery document.
std::string api_group(const std::vector<std::string>& versions) {
  Json list = Json::array();
  for (const std::string& v : versions)
    list.push_back({{"groupVersion", "resource.k8s.io/" + v}, {"version", v}});
  return Json{{"kind", "APIGroup"},
              {"apiVersion", "v1"},
              {"name", "resource.k8s.io"},
              {"versions", list},
              {"preferredVersion", list.at(0)}}
      .dump();
}

// NVIDIA's DRA driver's single-GPU template (k8s-dra-driver-gpu demo/specs/quickstart) as the
// API server returns it: v1 shape, server-set metadata.
Json single_gpu_template(const std::string& api_version) {
  Json request = api_version == "resource.k8s.io/v1"
                     ? Json{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}}
                     : Json{{"name", "gpu"}, {"deviceClassName", "gpu.nvidia.com"}};
  return Json{{"apiVersion", api_version},
              {"kind", "ResourceClaimTemplate"},
              {"metadata",
               {{"name", "single-gpu"},
                {"namespace", "ml"},
                {"uid", "5c1f5a2e-8d3b-4b8e-9a51-2f0c3d7e1a44"},
                {"resourceVersion", "48213"},
                {"creationTimestamp", "2026-11-20T09:14:03Z"}}},
              {"spec", {{"spec", {{"devices", {{"requests", Json::array({request})}}}}}}}};
}

struct Recorded {
  std::string path, authorization, accept;
};

// The simulated API server. `versions` are the resource.k8s.io versions it serves; objects are
// keyed by request path; `override_status` answers every object GET with that status.
class FakeApiServer {
 public:
  // New certificates in `dir` (a CA and a leaf for `cert_name`), unless `reuse` says to serve
  // those already there; `port` 0 picks a free one.
  explicit FakeApiServer(const std::string& dir, const std::string& cert_name = "127.0.0.1",
                         int port = 0, bool reuse = false)
      : server_(
            dir, [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); },
            cert_name, port, reuse) {}
  ~FakeApiServer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    server_.stop();
  }

  int port() const { return server_.port(); }
  std::string ca_path() const { return server_.ca_path(); }

  void set_versions(std::vector<std::string> v) {
    std::lock_guard<std::mutex> lock(mutex_);
    versions_ = std::move(v);
  }
  void put(const std::string& path, std::string body) {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_[path] = std::move(body);
  }
  // GET `path` (a Pod collection) answers page N of `pages` for `continue=pN` (none: page 0);
  // each page's metadata.continue names the next.
  void put_pages(const std::string& path, std::vector<std::string> pages) {
    std::lock_guard<std::mutex> lock(mutex_);
    pages_[path] = std::move(pages);
  }
  std::vector<std::string> list_queries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return list_queries_;
  }
  void override_status(int status, std::string body) {
    std::lock_guard<std::mutex> lock(mutex_);
    override_status_ = status;
    override_body_ = std::move(body);
  }
  void set_delay(std::chrono::milliseconds delay) {
    std::lock_guard<std::mutex> lock(mutex_);
    delay_ = delay;
  }
  std::vector<Recorded> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const Recorded& r : requests()) out.push_back(r.path);
    return out;
  }

 private:
  void answer(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mutex_);
    requests_.push_back(
        {req.path, req.get_header_value("Authorization"), req.get_header_value("Accept")});
    if (delay_.count() > 0) wake_.wait_for(lock, delay_, [this] { return stopping_; });
    if (auto it = pages_.find(req.path); it != pages_.end()) {
      const std::string next = req.get_param_value("continue");
      list_queries_.push_back("fieldSelector=" + req.get_param_value("fieldSelector") +
                              "&limit=" + req.get_param_value("limit") + "&continue=" + next);
      if (override_status_ != 0) {
        res.status = override_status_;
        res.set_content(override_body_, "application/json");
        return;
      }
      res.set_content(it->second.at(next.empty() ? 0 : std::stoul(next.substr(1))),
                      "application/json");
      return;
    }
    if (req.path == "/apis/resource.k8s.io") {
      if (versions_.empty()) {
        res.status = 404;  // Go's http.NotFound: the group is not served
        res.set_content("404 page not found\n", "text/plain; charset=utf-8");
      } else {
        res.set_content(api_group(versions_), "application/json");
      }
      return;
    }
    bool served = false;
    for (const std::string& v : versions_) {
      served |= req.path.rfind("/apis/resource.k8s.io/" + v + "/", 0) == 0;
    }
    if (!served) {
      res.status = 404;
      res.set_content("404 page not found\n", "text/plain; charset=utf-8");
      return;
    }
    if (override_status_ != 0) {
      res.status = override_status_;
      res.set_content(override_body_, "application/json");
      return;
    }
    auto it = objects_.find(req.path);
    if (it == objects_.end()) {
      res.status = 404;
      const std::string name = req.path.substr(req.path.rfind('/') + 1);
      res.set_content(
          status_body(404, "NotFound",
                      "resourceclaimtemplates.resource.k8s.io \"" + name + "\" not found"),
          "application/json");
      return;
    }
    res.set_content(it->second, "application/json");
  }

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::string> versions_{"v1", "v1beta2", "v1beta1"};
  std::map<std::string, std::string> objects_;
  std::map<std::string, std::vector<std::string>> pages_;
  std::vector<std::string> list_queries_;
  int override_status_ = 0;
  std::string override_body_;
  std::chrono::milliseconds delay_{0};
  std::vector<Recorded> requests_;
  TestApiServer server_;  // last: stopped before the members its handler reads go
};

// A server, a token file, and a resolver pointed at both.
struct Fixture {
  TempDir dir;
  FakeApiServer api{dir.path()};
  std::string token_path = dir.path() + "/token";
  KubeClaimResolverConfig config;

  Fixture() {
    write_text(token_path, "token-one\n");
    config.host = "127.0.0.1";
    config.port = api.port();
    config.ca_path = api.ca_path();
    config.token_path = token_path;
    config.timeout = 2000ms;  // generous: a loaded CI machine; the slow-server test sets its own
    config.review_deadline = 10s;  // likewise; the deadline test sets its own
  }
};

const char* kTemplatePath = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates/";

}  // namespace

TEST_CASE("kube: a ResourceClaimTemplate is found, its ResourceClaimSpec returned") {
  Fixture f;
  const Json object =
      Json::parse(read_text(kFixtures + "k8s-api__resource.k8s.io.v1.ResourceClaimTemplate.json"));
  f.api.put(std::string(kTemplatePath) + "single-gpu", object.dump());
  KubeClaimResolver claims(f.config);

  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  CHECK(r.status == ClaimLookup::kFound);
  CHECK(r.error.empty());
  CHECK(r.api_version == "resource.k8s.io/v1");
  CHECK(r.spec == object["spec"]["spec"]);  // the template's spec.spec, every field kept
  CHECK(f.api.paths() == std::vector<std::string>{"/apis/resource.k8s.io",
                                                  std::string(kTemplatePath) + "single-gpu"});
  for (const Recorded& req : f.api.requests()) {
    CHECK(req.authorization == "Bearer token-one");
    CHECK(req.accept == "application/json");
  }
}

TEST_CASE("kube: a ResourceClaim is found, its spec returned") {
  Fixture f;
  const Json object =
      Json::parse(read_text(kFixtures + "k8s-api__resource.k8s.io.v1.ResourceClaim.json"));
  f.api.put("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/shared-gpu", object.dump());
  KubeClaimResolver claims(f.config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kClaim, "ml", "shared-gpu");
  CHECK(r.status == ClaimLookup::kFound);
  CHECK(r.spec == object["spec"]);
  // A template's name is looked up among templates, not claims.
  const ResolvedClaim t = claims.resolve(ClaimKind::kTemplate, "ml", "shared-gpu");
  CHECK(t.status == ClaimLookup::kNotFound);
  CHECK(t.error == "ResourceClaimTemplate ml/shared-gpu does not exist");
}

TEST_CASE("kube: 404 NotFound is kNotFound and cached, the second lookup makes no request") {
  Fixture f;
  KubeClaimResolver claims(f.config);
  const ResolvedClaim first = claims.resolve(ClaimKind::kTemplate, "ml", "missing");
  CHECK(first.status == ClaimLookup::kNotFound);
  CHECK(first.error == "ResourceClaimTemplate ml/missing does not exist");
  const size_t requests = f.api.requests().size();
  CHECK(requests == 2);  // discovery + the GET
  const ResolvedClaim second = claims.resolve(ClaimKind::kTemplate, "ml", "missing");
  CHECK(second.status == ClaimLookup::kNotFound);
  CHECK(f.api.requests().size() == requests);
  const ClaimLookupCounts c = claims.counts();
  CHECK(c.not_found == 1);
  CHECK(c.cache_hit == 1);
  CHECK(c.found + c.unavailable == 0);
}

TEST_CASE("kube: a found object is not kept by default: each lookup reads the current one") {
  Fixture f;
  const std::string path = std::string(kTemplatePath) + "single-gpu";
  f.api.put(path, single_gpu_template("resource.k8s.io/v1").dump());
  KubeClaimResolver claims(f.config);
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu").status == ClaimLookup::kFound);
  // Deleted and created again larger under the same name, admitted by another replica.
  Json larger = single_gpu_template("resource.k8s.io/v1");
  larger["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 4;
  f.api.put(path, larger.dump());
  const ResolvedClaim now = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  CHECK(now.spec["devices"]["requests"][0]["exactly"]["count"] == 4);
  CHECK(claims.counts().cache_hit == 0);
  CHECK(claims.cache_entries() == 0);
}

TEST_CASE("kube: a found template is served from the cache until its TTL ends") {
  Fixture f;
  auto now =
      std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  f.config.now = [now] { return *now; };
  f.config.found_ttl = 60s;
  f.api.put(std::string(kTemplatePath) + "single-gpu",
            single_gpu_template("resource.k8s.io/v1").dump());
  KubeClaimResolver claims(f.config);
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu").status == ClaimLookup::kFound);
  *now += 59s;
  const ResolvedClaim hit = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  CHECK(hit.status == ClaimLookup::kFound);
  CHECK(hit.spec["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com");
  CHECK(f.api.requests().size() == 2);
  *now += 2s;  // expired: asked again (the discovered version is kept)
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu").status == ClaimLookup::kFound);
  CHECK(f.api.paths().size() == 3);
  CHECK(f.api.paths().back() == std::string(kTemplatePath) + "single-gpu");
  CHECK(claims.counts().found == 2);
  CHECK(claims.counts().cache_hit == 1);
}

TEST_CASE("kube: the cache holds at most cache_size names, least recently used evicted") {
  Fixture f;
  f.config.cache_size = 2;
  KubeClaimResolver claims(f.config);
  claims.resolve(ClaimKind::kTemplate, "ml", "a");
  claims.resolve(ClaimKind::kTemplate, "ml", "b");
  claims.resolve(ClaimKind::kTemplate, "ml", "a");  // hit: a is now the most recent
  claims.resolve(ClaimKind::kTemplate, "ml", "c");  // evicts b
  CHECK(claims.cache_entries() == 2);
  const size_t before = f.api.requests().size();
  CHECK(before == 4);                               // discovery + a, b, c
  claims.resolve(ClaimKind::kTemplate, "ml", "a");  // still cached
  CHECK(f.api.requests().size() == before);
  claims.resolve(ClaimKind::kTemplate, "ml", "b");  // evicted: asked again
  CHECK(f.api.requests().size() == before + 1);
  CHECK(f.api.paths().back() == std::string(kTemplatePath) + "b");
  CHECK(claims.cache_entries() == 2);
}

TEST_CASE("kube: 403 Forbidden is kUnavailable with the API server's message") {
  Fixture f;
  const std::string message =
      "resourceclaimtemplates.resource.k8s.io \"single-gpu\" is forbidden: User "
      "\"system:serviceaccount:gpuadmit-system:gpuadmit\" cannot get resource "
      "\"resourceclaimtemplates\" in API group \"resource.k8s.io\" in the namespace \"ml\"";
  f.api.override_status(403, status_body(403, "Forbidden", message));
  KubeClaimResolver claims(f.config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error == "the API server answered 403 (Forbidden): " + message);
  CHECK(claims.counts().unavailable == 1);
}

TEST_CASE("kube: 500 is kUnavailable") {
  Fixture f;
  f.api.override_status(500, status_body(500, "InternalError",
                                         "Internal error occurred: etcdserver: request timed out"));
  KubeClaimResolver claims(f.config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error ==
        "the API server answered 500 (InternalError): Internal error occurred: etcdserver: "
        "request timed out");
}

TEST_CASE("kube: an unavailable result is remembered only for unavailable_ttl") {
  Fixture f;
  auto now =
      std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  f.config.now = [now] { return *now; };
  f.config.unavailable_ttl = 1s;
  f.api.override_status(503, "service unavailable");
  KubeClaimResolver claims(f.config);
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "x").error == "the API server answered 503");
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "x").status == ClaimLookup::kUnavailable);
  CHECK(f.api.requests().size() == 2);
  *now += 1001ms;
  f.api.override_status(0, "");
  f.api.put(std::string(kTemplatePath) + "x", single_gpu_template("resource.k8s.io/v1").dump());
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "x").status == ClaimLookup::kFound);
}

TEST_CASE("kube: a server slower than the timeout is kUnavailable within about the timeout") {
  Fixture f;
  f.config.timeout = 200ms;
  f.api.set_delay(3000ms);  // cut short when the server stops
  KubeClaimResolver claims(f.config);
  const auto start = std::chrono::steady_clock::now();
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error == "no answer within 200 ms");
  CHECK(took < 2000ms);  // the 3 s answer was not awaited
}

// Several uncached claims in one review, each answered slowly: without a per-review deadline
// the lookups add up past the webhook's timeoutSeconds (here 5 requests x 400 ms = 2 s).
TEST_CASE("kube: the lookups of one review end at its deadline, however many claims it names") {
  Fixture f;
  f.config.timeout = 2000ms;
  f.config.review_deadline = 1000ms;
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  for (const std::string& n : names) {
    f.api.put(std::string(kTemplatePath) + n, single_gpu_template("resource.k8s.io/v1").dump());
  }
  f.api.set_delay(400ms);
  KubeClaimResolver claims(f.config);
  const auto review = claims.for_review();
  const auto start = std::chrono::steady_clock::now();
  std::vector<ResolvedClaim> results;
  for (const std::string& n : names)
    results.push_back(review->resolve(ClaimKind::kTemplate, "ml", n));
  const auto took = std::chrono::steady_clock::now() - start;
  // Discovery (400 ms) and "a" (400 ms); "b" was given the 200 ms left and cut short; "c" and
  // "d" were not asked for.
  CHECK(results[0].status == ClaimLookup::kFound);
  for (std::size_t i = 1; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(results[i].status == ClaimLookup::kUnavailable);
    CHECK(results[i].error ==
          "the lookups of this review took their 1000 ms (--dra-lookup-deadline): not looked up");
  }
  CHECK(took < 1600ms);  // about the deadline; 2 s without it
  CHECK(f.api.paths() == std::vector<std::string>{"/apis/resource.k8s.io",
                                                  std::string(kTemplatePath) + "a",
                                                  std::string(kTemplatePath) + "b"});
  ClaimLookupCounts c = claims.counts();
  CHECK(c.found == 1);
  CHECK(c.deadline == 3);
  CHECK(c.unavailable == 0);

  // Nothing was remembered for the names the deadline cut: the next review asks for them, with
  // a deadline of its own (and for "a" again: found objects are not kept by default).
  f.api.set_delay(0ms);
  const auto next = claims.for_review();
  for (const std::string& n : names) {
    INFO(n);
    CHECK(next->resolve(ClaimKind::kTemplate, "ml", n).status == ClaimLookup::kFound);
  }
  c = claims.counts();
  CHECK(c.found == 5);
  CHECK(c.cache_hit == 0);
  CHECK(f.api.paths().size() == 7);
}

TEST_CASE("kube: a lookup outside a review has a deadline of its own") {
  Fixture f;
  f.config.timeout = 2000ms;
  f.config.review_deadline = 300ms;
  f.api.set_delay(1000ms);
  KubeClaimResolver claims(f.config);
  const auto start = std::chrono::steady_clock::now();
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "a");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error ==
        "the lookups of this review took their 300 ms (--dra-lookup-deadline): not looked up");
  CHECK(std::chrono::steady_clock::now() - start < 900ms);
  CHECK(claims.counts().deadline == 1);
}

TEST_CASE("kube: a server that serves only v1beta1 is asked in v1beta1, discovered once") {
  Fixture f;
  f.api.set_versions({"v1beta1"});
  f.api.put("/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaimtemplates/single-gpu",
            single_gpu_template("resource.k8s.io/v1beta1").dump());
  KubeClaimResolver claims(f.config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu");
  CHECK(r.status == ClaimLookup::kFound);
  CHECK(r.api_version == "resource.k8s.io/v1beta1");
  CHECK(r.spec["devices"]["requests"][0]["deviceClassName"] == "gpu.nvidia.com");
  CHECK(claims.resolve(ClaimKind::kClaim, "ml", "other").status == ClaimLookup::kNotFound);
  CHECK(f.api.paths() ==
        std::vector<std::string>{
            "/apis/resource.k8s.io",
            "/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaimtemplates/single-gpu",
            "/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaims/other"});
}

TEST_CASE("kube: v1beta2 is preferred over v1beta1 when v1 is not served") {
  Fixture f;
  f.api.set_versions({"v1beta1", "v1beta2"});
  KubeClaimResolver claims(f.config);
  claims.resolve(ClaimKind::kTemplate, "ml", "t");
  CHECK(f.api.paths().back() ==
        "/apis/resource.k8s.io/v1beta2/namespaces/ml/resourceclaimtemplates/t");
}

TEST_CASE("kube: a group that is not served is kUnavailable, and so is a version that goes away") {
  Fixture f;
  f.api.set_versions({});
  KubeClaimResolver claims(f.config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "a");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error == "the API server does not serve resource.k8s.io (DRA is not enabled)");

  f.api.set_versions({"v1"});
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "b").status == ClaimLookup::kNotFound);
  f.api.set_versions({"v1beta1"});  // a rollback: v1 paths now answer "404 page not found"
  const ResolvedClaim gone = claims.resolve(ClaimKind::kTemplate, "ml", "c");
  CHECK(gone.status == ClaimLookup::kUnavailable);
  CHECK(gone.error == "resource.k8s.io/v1 is no longer served");
  claims.resolve(ClaimKind::kTemplate, "ml", "d");  // discovered again
  const std::vector<std::string> paths = f.api.paths();
  REQUIRE(paths.size() >= 2);
  CHECK(paths[paths.size() - 2] == "/apis/resource.k8s.io");
  CHECK(paths.back() == "/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaimtemplates/d");
}

TEST_CASE("kube: the token is read again for each request, so a rotated token is sent") {
  Fixture f;
  KubeClaimResolver claims(f.config);
  claims.resolve(ClaimKind::kTemplate, "ml", "a");
  write_text(f.token_path, "token-two");
  claims.resolve(ClaimKind::kTemplate, "ml", "b");
  const std::vector<Recorded> requests = f.api.requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].authorization == "Bearer token-one");
  CHECK(requests[1].authorization == "Bearer token-one");
  CHECK(requests[2].authorization == "Bearer token-two");

  std::filesystem::remove(f.token_path);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "c");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error == "cannot read the service account token " + f.token_path);
  CHECK(f.api.requests().size() == 3);
}

TEST_CASE("kube: a kept-alive connection the server has closed is replaced, not an error") {
  TempDir dir;
  auto api = std::make_unique<FakeApiServer>(dir.path());
  const int port = api->port();
  KubeClaimResolverConfig config;
  config.host = "127.0.0.1";
  config.port = port;
  config.ca_path = api->ca_path();
  config.token_path = "/dev/null";
  KubeClaimResolver claims(config);
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "a").status == ClaimLookup::kNotFound);
  // The API server restarts (or closes an idle connection): the pooled connection is dead.
  api.reset();
  api = std::make_unique<FakeApiServer>(dir.path(), "127.0.0.1", port, /*reuse=*/true);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "b");
  CHECK(r.error == "ResourceClaimTemplate ml/b does not exist");
  CHECK(api->paths() ==
        std::vector<std::string>{std::string(kTemplatePath) + "b"});  // version kept
}

TEST_CASE("kube: a server certificate the cluster CA did not sign is refused") {
  Fixture f;
  TempDir other;
  FakeApiServer impostor(other.path());
  f.config.port = impostor.port();  // f's CA, the impostor's certificate
  KubeClaimResolver claims(f.config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "a");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error == "the API server's certificate is not signed by " + f.config.ca_path +
                       " or does not name 127.0.0.1");
  CHECK(impostor.requests().empty());
}

TEST_CASE("kube: a certificate for another name is refused") {
  TempDir dir;
  FakeApiServer api(dir.path(), "kubernetes.default.svc");
  KubeClaimResolverConfig config;
  config.host = "127.0.0.1";
  config.port = api.port();
  config.ca_path = api.ca_path();
  config.token_path = "/dev/null";
  KubeClaimResolver claims(config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "a");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error.find("does not name 127.0.0.1") != std::string::npos);
}

TEST_CASE("kube: nothing listening is kUnavailable") {
  TempDir dir;
  KubeClaimResolverConfig config;
  config.host = "127.0.0.1";
  int port = 0;
  {
    FakeApiServer api(dir.path());
    port = api.port();
  }  // stopped: the port is closed
  config.port = port;
  config.ca_path = dir.path() + "/ca.crt";
  config.token_path = "/dev/null";
  KubeClaimResolver claims(config);
  const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", "a");
  CHECK(r.status == ClaimLookup::kUnavailable);
  CHECK(r.error == "cannot connect to 127.0.0.1:" + std::to_string(port));
}

TEST_CASE("kube: names no object can have are kNotFound without a request") {
  Fixture f;
  KubeClaimResolver claims(f.config);
  for (const char* name : {"", "../../secrets/x", "Single-GPU", "a/b", "a?b"}) {
    const ResolvedClaim r = claims.resolve(ClaimKind::kTemplate, "ml", name);
    CHECK(r.status == ClaimLookup::kNotFound);
    CHECK(r.error == std::string("ResourceClaimTemplate name \"") + name +
                         "\" in namespace \"ml\" is not a valid name");
  }
  CHECK(claims.resolve(ClaimKind::kClaim, "ml/x", "a").status == ClaimLookup::kNotFound);
  CHECK(f.api.requests().empty());
}

TEST_CASE("kube: a malformed answer is kUnavailable") {
  Fixture f;
  f.api.put(std::string(kTemplatePath) + "a", "{not json");
  f.api.put(std::string(kTemplatePath) + "b", R"({"kind":"ResourceClaim","spec":{}})");
  f.api.put(
      std::string(kTemplatePath) + "c",
      R"({"kind":"ResourceClaimTemplate","apiVersion":"resource.k8s.io/v1","spec":{"spec":[]}})");
  KubeClaimResolver claims(f.config);
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "a").error ==
        "the API server's answer is not a ResourceClaimTemplate");
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "b").error ==
        "the API server's answer is not a ResourceClaimTemplate");
  CHECK(claims.resolve(ClaimKind::kTemplate, "ml", "c").error ==
        "the API server's ResourceClaimTemplate has a malformed spec");
}

TEST_CASE("kube: concurrent lookups from several threads") {
  Fixture f;
  f.config.found_ttl = 60s;  // the cache shared between threads
  f.api.put(std::string(kTemplatePath) + "single-gpu",
            single_gpu_template("resource.k8s.io/v1").dump());
  KubeClaimResolver claims(f.config);
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (claims.resolve(ClaimKind::kTemplate, "ml", "single-gpu").status == ClaimLookup::kFound)
          ++found;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(found == 40);
  const ClaimLookupCounts c = claims.counts();
  CHECK(c.found + c.cache_hit == 40);
  CHECK(c.found >= 1);
  CHECK(c.found <= 4);  // at most one API lookup per thread before the first is cached
}

TEST_CASE("kube: lookup metrics, a closed label set") {
  Fixture f;
  f.config.found_ttl = 60s;  // a cache hit to count
  f.api.put(std::string(kTemplatePath) + "a", single_gpu_template("resource.k8s.io/v1").dump());
  KubeClaimResolver claims(f.config);
  claims.resolve(ClaimKind::kTemplate, "ml", "a");
  claims.resolve(ClaimKind::kTemplate, "ml", "a");
  claims.resolve(ClaimKind::kTemplate, "ml", "b");
  std::string out;
  claims.render_metrics(out);
  CHECK(out ==
        "# HELP gpuadmit_dra_lookups_total DRA claim lookups through the Kubernetes API by "
        "result: found, not_found, unavailable (the API's answers), cache_hit (answered from "
        "the cache) and deadline (not made: the review's lookup deadline had passed).\n"
        "# TYPE gpuadmit_dra_lookups_total counter\n"
        "gpuadmit_dra_lookups_total{result=\"found\"} 1\n"
        "gpuadmit_dra_lookups_total{result=\"not_found\"} 1\n"
        "gpuadmit_dra_lookups_total{result=\"unavailable\"} 0\n"
        "gpuadmit_dra_lookups_total{result=\"cache_hit\"} 1\n"
        "gpuadmit_dra_lookups_total{result=\"deadline\"} 0\n");
}

TEST_CASE("kube: in-cluster configuration from the service environment") {
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = KubeClaimResolverConfig::in_cluster();
  REQUIRE(std::holds_alternative<KubeClaimResolverConfig>(config));
  const auto& c = std::get<KubeClaimResolverConfig>(config);
  CHECK(c.host == "10.96.0.1");
  CHECK(c.port == 443);
  CHECK(c.token_path == "/var/run/secrets/kubernetes.io/serviceaccount/token");
  CHECK(c.ca_path == "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
  CHECK(c.timeout == 500ms);
  CHECK(c.review_deadline == 1000ms);
  ::setenv("KUBERNETES_SERVICE_PORT", "https", 1);
  CHECK(std::get<std::string>(KubeClaimResolverConfig::in_cluster()) ==
        "KUBERNETES_SERVICE_PORT is not a port: \"https\"");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  CHECK(std::get<std::string>(KubeClaimResolverConfig::in_cluster()) ==
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a pod");
}
}  // namespace kube_claim_resolver_test

namespace kube_claim_resolver_test {
namespace {

// A v1 PodList page as the API server sends it; `next` its metadata.continue.
std::string pod_page(const std::vector<Json>& items, const std::string& next) {
  return Json{{"kind", "PodList"},
              {"apiVersion", "v1"},
              {"metadata", {{"resourceVersion", "48213"}, {"continue", next}}},
              {"items", items}}
      .dump();
}

// A Pod of namespace ml naming claims by `field` (resourceClaimName / resourceClaimTemplateName).
Json pod(const std::string& name, const std::string& field, const std::string& claim) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "ml"}}},
              {"spec",
               {{"resourceClaims", Json::array({{{"name", "gpu"}, {field, claim}}})},
                {"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
}

const char* kPodsPath = "/api/v1/namespaces/ml/pods";

}  // namespace

TEST_CASE("kube: the Pods not scheduled yet that name a claim, listed page by page") {
  Fixture f;
  Json deleting = pod("q", "resourceClaimName", "a");
  deleting["metadata"]["deletionTimestamp"] = "2026-11-29T09:00:00Z";
  Json bound = pod("s", "resourceClaimName", "a");
  bound["spec"]["nodeName"] = "gpu-1";
  // A claim the resource-claim controller made from a template, named in the Pod's status.
  Json made = pod("v", "resourceClaimTemplateName", "tmpl");
  made["status"]["resourceClaimStatuses"] =
      Json::array({{{"name", "gpu"}, {"resourceClaimName", "a"}}});
  f.api.put_pages(kPodsPath, {pod_page({pod("p", "resourceClaimName", "a"),
                                        pod("r", "resourceClaimTemplateName", "a"), deleting},
                                       "p1"),
                              pod_page({bound, pod("t", "resourceClaimName", "a"),
                                        pod("u", "resourceClaimName", "b"), made},
                                       "")});
  KubeClaimResolver claims(f.config);

  const gpuadmit::PendingPods named = claims.pending_pods_naming(ClaimKind::kClaim, "ml", "a");
  CHECK(named.status == gpuadmit::PendingPodsLookup::kListed);
  CHECK(named.names == std::vector<std::string>{"p", "t", "v"});
  CHECK(f.api.list_queries() ==
        std::vector<std::string>{"fieldSelector=spec.nodeName=&limit=500&continue=",
                                 "fieldSelector=spec.nodeName=&limit=500&continue=p1"});
  // A template of the same name: the Pods naming it by resourceClaimTemplateName.
  const gpuadmit::PendingPods tmpl = claims.pending_pods_naming(ClaimKind::kTemplate, "ml", "a");
  CHECK(tmpl.names == std::vector<std::string>{"r"});
  CHECK(claims.pending_pods_naming(ClaimKind::kClaim, "ml", "none").names.empty());
}

TEST_CASE("kube: Pods that cannot be listed are unavailable, with the API's reason") {
  Fixture f;
  f.api.put_pages(kPodsPath, {pod_page({}, "")});
  f.api.override_status(403, status_body(403, "Forbidden",
                                         "pods is forbidden: User \"system:serviceaccount:"
                                         "gpuadmit-system:gpuadmit\" cannot list resource "
                                         "\"pods\" in API group \"\" in the namespace \"ml\""));
  KubeClaimResolver claims(f.config);
  const gpuadmit::PendingPods r = claims.pending_pods_naming(ClaimKind::kClaim, "ml", "a");
  CHECK(r.status == gpuadmit::PendingPodsLookup::kUnavailable);
  INFO(r.error);
  CHECK(r.error.rfind("listing Pods: ", 0) == 0);
  CHECK(r.error.find("cannot list resource") != std::string::npos);
}

TEST_CASE("kube: a claim's name is forgotten by the cache when a claim of that name is created") {
  Fixture f;
  const Json object =
      Json::parse(read_text(kFixtures + "k8s-api__resource.k8s.io.v1.ResourceClaim.json"));
  const std::string path = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/shared-gpu";
  f.api.put(path, object.dump());
  f.api.put_pages(kPodsPath, {pod_page({}, "")});
  f.config.found_ttl = 60s;  // kept only when configured so
  KubeClaimResolver claims(f.config);
  CHECK(claims.resolve(ClaimKind::kClaim, "ml", "shared-gpu").status == ClaimLookup::kFound);
  CHECK(claims.resolve(ClaimKind::kClaim, "ml", "shared-gpu").status == ClaimLookup::kFound);
  CHECK(claims.cache_entries() == 1);  // the second from the cache
  CHECK(claims.pending_pods_naming(ClaimKind::kClaim, "ml", "shared-gpu").names.empty());
  CHECK(claims.cache_entries() == 0);
  CHECK(claims.resolve(ClaimKind::kClaim, "ml", "shared-gpu").status == ClaimLookup::kFound);
  const std::vector<std::string> paths = f.api.paths();
  CHECK(std::count(paths.begin(), paths.end(), path) == 2);
}

}  // namespace kube_claim_resolver_test
