// kube/node_watch.h against a simulated API server: the paged list (`limit`, `continue`), the
// watch stream, status-only MODIFIED events that change nothing, a 410 that makes it list again,
// a refused list that leaves it unsynced, and what the cache keeps of a Node.

#include "kube/node_watch.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "tests/kube/fake_scheduling.h"

namespace node_watch_test {

using gpuadmit::ClusterNode;
using gpuadmit::Json;
using gpuadmit::Taint;
using namespace gpuadmit::kube;
using gpuadmit::testing::FakeScheduling;
using gpuadmit::testing::TempDir;
using namespace std::chrono_literals;

namespace {

const std::string kNodes = "/api/v1/nodes";

// A Node as the API server returns it: labels from GPU Feature Discovery, a GPU pool's taint, and
// a status the cache must not keep.
Json node(const std::string& name, const std::string& product, const std::string& rv,
          bool tainted = true) {
  Json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata",
             {{"name", name},
              {"resourceVersion", rv},
              {"uid", "u-" + name},
              {"labels",
               {{"kubernetes.io/hostname", name},
                {"kubernetes.io/os", "linux"},
                {"nvidia.com/gpu.product", product}}}}},
            {"spec", {{"podCIDR", "10.244.1.0/24"}}},
            {"status",
             {{"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})},
              {"images", Json::array({{{"names", {"nvcr.io/nvidia/pytorch:24.01-py3"}},
                                       {"sizeBytes", 9000000000LL}}})}}}};
  if (tainted) {
    n["spec"]["taints"] =
        Json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}});
  }
  return n;
}

struct Fixture {
  TempDir dir;
  FakeScheduling api{dir.path(), kNodes, "NodeList", "v1"};
  NodeWatchConfig config;
  std::mutex mutex;
  std::vector<std::string> errors;

  Fixture() {
    std::ofstream(dir.path() + "/token") << "token-one\n";
    config.access.host = "127.0.0.1";
    config.access.port = api.port();
    config.access.ca_path = api.ca_path();
    config.access.token_path = dir.path() + "/token";
    config.timeout = 2000ms;
    config.watch_timeout = 300s;
    config.retry_min = 20ms;
    config.retry_max = 100ms;
    config.page_size = 2;
    config.on_error = [this](const std::string& e) {
      std::lock_guard<std::mutex> lock(mutex);
      errors.push_back(e);
    };
  }
  std::vector<std::string> logged() {
    std::lock_guard<std::mutex> lock(mutex);
    return errors;
  }
};

template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

std::string watch_from(const std::string& rv) {
  return kNodes + "?watch=true&resourceVersion=" + rv +
         "&allowWatchBookmarks=true&timeoutSeconds=300";
}

}  // namespace

TEST_CASE("node watch: listed page by page, then every watch event applied in order") {
  Fixture f;
  f.api.set_list(
      {node("gpu-a100-1", "NVIDIA-A100-SXM4-80GB", "11"),
       node("gpu-a100-2", "NVIDIA-A100-SXM4-80GB", "12"), node("cpu-1", "", "13", false)},
      "100");
  NodeWatch watch(f.config);
  REQUIRE(eventually([&] { return watch.synced() && f.api.open_watches() == 1; }));
  // Two pages of two (page_size 2), then the watch from the list's version.
  CHECK(f.api.requests() == std::vector<std::string>{kNodes + "?limit=2",
                                                     kNodes + "?limit=2&continue=2",
                                                     watch_from("100")});
  REQUIRE(watch.find("gpu-a100-2").has_value());
  const ClusterNode n = *watch.find("gpu-a100-2");
  CHECK(n.labels == std::vector<std::pair<std::string, std::string>>{
                        {"kubernetes.io/hostname", "gpu-a100-2"},
                        {"kubernetes.io/os", "linux"},
                        {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}});
  REQUIRE(n.taints.size() == 1);
  CHECK(n.taints[0].key == "nvidia.com/gpu");
  CHECK(n.taints[0].value == "present");
  CHECK(n.taints[0].effect == "NoSchedule");
  CHECK(watch.find("cpu-1")->taints.empty());
  CHECK_FALSE(watch.find("gpu-h100-1").has_value());
  CHECK(watch.counts().nodes == 3);

  // A heartbeat (status only): nothing changes. A relabel, a new node and a deletion do.
  Json heartbeat = node("gpu-a100-1", "NVIDIA-A100-SXM4-80GB", "101");
  heartbeat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:00:00Z";
  f.api.send("MODIFIED", heartbeat);
  f.api.send("MODIFIED", node("gpu-a100-2", "NVIDIA-H100-80GB-HBM3", "102"));
  f.api.send("ADDED", node("gpu-h100-1", "NVIDIA-H100-80GB-HBM3", "103"));
  f.api.send("DELETED", node("cpu-1", "", "104", false));
  f.api.send(
      "BOOKMARK",
      Json{{"kind", "Node"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", "150"}}}});
  REQUIRE(eventually([&] { return !watch.find("cpu-1").has_value(); }));
  CHECK(watch.find("gpu-a100-2")->labels[2].second == "NVIDIA-H100-80GB-HBM3");
  CHECK(watch.find("gpu-h100-1").has_value());
  CHECK(watch.counts().events == 3);
  CHECK(watch.counts().nodes == 3);

  // The server ends the watch (its timeoutSeconds): watched again from the last version seen.
  f.api.end_watch();
  REQUIRE(eventually([&] { return f.api.requests().size() == 4; }));
  CHECK(f.api.requests().back() == watch_from("150"));
  CHECK(watch.counts().lists == 1);
  CHECK(f.logged().empty());
  std::string metrics;
  watch.render_metrics(metrics);
  CHECK(metrics.find("gpuadmit_nodes_synced 1\n") != std::string::npos);
  CHECK(metrics.find("gpuadmit_nodes 3\n") != std::string::npos);
  CHECK(metrics.find("gpuadmit_node_watch_events_total 3\n") != std::string::npos);
}

TEST_CASE("node watch: an expired version (410) lists again") {
  Fixture f;
  f.api.set_list({node("a", "x", "1")}, "100");
  NodeWatch watch(f.config);
  REQUIRE(eventually([&] { return f.api.open_watches() == 1; }));
  f.api.set_list({node("b", "x", "2")}, "500");
  f.api.send("ERROR", Json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"status", "Failure"},
                           {"message", "too old resource version: 100 (400)"},
                           {"reason", "Expired"},
                           {"code", 410}});
  REQUIRE(eventually([&] { return watch.find("b").has_value(); }));
  CHECK_FALSE(watch.find("a").has_value());
  REQUIRE(eventually([&] { return f.api.requests().size() >= 4; }));
  const std::vector<std::string> requests = f.api.requests();
  CHECK(std::vector<std::string>(requests.begin(), requests.begin() + 4) ==
        std::vector<std::string>{kNodes + "?limit=2", watch_from("100"), kNodes + "?limit=2",
                                 watch_from("500")});
  CHECK(f.logged().empty());
}

TEST_CASE("node watch: not synced while the list is refused, then synced") {
  Fixture f;
  f.api.refuse_lists(403, Json{{"kind", "Status"},
                               {"apiVersion", "v1"},
                               {"status", "Failure"},
                               {"message",
                                "nodes is forbidden: User "
                                "\"system:serviceaccount:gpuadmit:gpuadmit\" cannot list resource "
                                "\"nodes\" in API group \"\" at the cluster scope"},
                               {"reason", "Forbidden"},
                               {"code", 403}}
                              .dump());
  f.api.set_list({node("a", "x", "1")}, "9");
  NodeWatch watch(f.config);
  REQUIRE(eventually([&] { return f.logged().size() >= 2; }));  // retried after a pause
  CHECK_FALSE(watch.synced());
  CHECK_FALSE(watch.find("a").has_value());
  CHECK(f.logged().front() ==
        "GET /api/v1/nodes: the API server answered 403 (Forbidden): nodes is forbidden: User "
        "\"system:serviceaccount:gpuadmit:gpuadmit\" cannot list resource \"nodes\" in API "
        "group \"\" at the cluster scope");
  f.api.refuse_lists(200, "");
  REQUIRE(eventually([&] { return watch.synced(); }));
  CHECK(watch.find("a").has_value());
}

TEST_CASE("node watch: a stop does not wait for the open watch to end") {
  Fixture f;
  f.api.set_list({node("a", "x", "1")}, "1");
  const auto start = std::chrono::steady_clock::now();
  {
    NodeWatch watch(f.config);
    REQUIRE(eventually([&] { return f.api.open_watches() == 1; }));
  }
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

}  // namespace node_watch_test
