// `gpuadmit fleet --live` reading the cluster from the API (a local HTTPS server serving
// tests/fleet's hand-computed fleet as the API server would, a few objects a page), through a
// kubeconfig: the same report as from the export, and the errors of a cluster that refuses.

#include <catch2/catch.hpp>

#include "tests/kube/fake_list_server.h"
#include "tests/support/process.h"
#include "yaml/reader.h"

namespace gpuadmit::kube {
namespace fleet_api_test {
namespace {

using testing::FakeListServer;
using testing::TempDir;
using testing::TestPki;

const std::string kBinary = GPUADMIT_BINARY;
const std::string kData = std::string(GPUADMIT_SOURCE_DIR) + "/tests/fleet/data/";
const std::string kPolicy = kData + "live-policy.yaml";

// The fleet's Nodes and Pods (the List and the corpus's MIG node).
std::string fleet_yaml() {
  return testing::read_text(kData + "live-fleet.yaml") + "---\n" +
         testing::read_text(std::string(GPUADMIT_SHARED_DIR) +
                            "/corpus/configs/fake-gpu-operator__4_instances.yaml");
}

Json objects_of_kind(const std::string& yaml, const std::string& kind) {
  Json items = Json::array();
  yaml::DocumentStream stream{std::string_view(yaml)};
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument doc = yaml::parse_document(source, false);
    if (doc.empty) continue;
    Json list =
        string_member(doc.value, "kind") == "List" ? doc.value["items"] : Json::array({doc.value});
    for (Json& item : list) {
      if (string_member(item, "kind") == kind) items.push_back(std::move(item));
    }
  }
  return items;
}

// The API server's answers: nodes and pods 4 a page (pods filtered as the field selector asks),
// resource.k8s.io not served; anything without the token is 401.
struct Cluster {
  TempDir dir;
  TestPki pki{dir.path()};
  Json nodes, pods;
  int pods_status = 200;
  Cluster() {
    const std::string yaml = fleet_yaml();
    nodes = objects_of_kind(yaml, "Node");
    pods = objects_of_kind(yaml, "Pod");
  }
  void answer(const httplib::Request& req, httplib::Response& res) const {
    if (req.get_header_value("Authorization") != "Bearer reader-token") {
      res.status = 401;
      res.set_content(testing::status_body(401, "Unauthorized", "Unauthorized"),
                      "application/json");
      return;
    }
    const bool is_pods = req.path == "/api/v1/pods";
    if (is_pods && pods_status != 200) {
      res.status = pods_status;
      res.set_content(testing::status_body(pods_status, "Forbidden",
                                           "pods is forbidden: User \"reader\" cannot list "
                                           "resource \"pods\" in API group \"\" at the cluster "
                                           "scope"),
                      "application/json");
      return;
    }
    if (req.path != "/api/v1/nodes" && !is_pods) {
      res.status = 404;
      res.set_content("404 page not found\n", "text/plain");
      return;
    }
    Json all = Json::array();
    for (const Json& o : is_pods ? pods : nodes) {
      const std::string_view phase = string_member(o["status"], "phase");
      if (is_pods &&
          req.get_param_value("fieldSelector") == "status.phase!=Succeeded,status.phase!=Failed" &&
          (phase == "Succeeded" || phase == "Failed")) {
        continue;
      }
      all.push_back(o);
    }
    const std::string token = req.get_param_value("continue");
    const size_t from = token.empty() ? 0 : std::stoul(token);
    const size_t to = std::min(from + 4, all.size());
    Json page = Json::array();
    for (size_t i = from; i < to; ++i) page.push_back(all[i]);
    res.set_content(testing::list_page(is_pods ? "PodList" : "NodeList", page,
                                       to < all.size() ? std::to_string(to) : ""),
                    "application/json");
  }
  std::string kubeconfig(int port, const std::string& token = "reader-token") const {
    return dir.write("config",
                     "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n- name: t\n"
                     "  cluster:\n    server: https://127.0.0.1:" +
                         std::to_string(port) +
                         "\n    certificate-authority-data: " + certs::base64(pki.ca.cert_pem) +
                         "\ncontexts:\n- name: test\n  context: {cluster: t, user: r}\n"
                         "users:\n- name: r\n  user: {token: " +
                         token + "}\n");
  }
};

TEST_CASE("fleet api: the cluster from the API gives the report its export gives") {
  Cluster cluster;
  FakeListServer server(cluster.dir.path(), [&](const httplib::Request& q, httplib::Response& s) {
    cluster.answer(q, s);
  });
  const std::string config = cluster.kubeconfig(server.port());
  const auto api = gpuadmit::testing::run_command(
      kBinary + " fleet --live --output json --policy " + kPolicy + " --kubeconfig " + config);
  CHECK(api.err == "");
  REQUIRE(api.exit_code == 0);
  const auto file = gpuadmit::testing::run_command(
      kBinary + " fleet --live --output json --policy " + kPolicy + " -", fleet_yaml());
  REQUIRE(file.exit_code == 0);
  // The API lists only non-terminal pods (the field selector); the export holds one Succeeded
  // pod, which the summary counts as read and finished. Everything else is the same report.
  Json from_api = Json::parse(api.out), from_file = Json::parse(file.out);
  CHECK(from_api["summary"]["pods"] == 32);
  CHECK(from_api["summary"]["terminalPods"] == 0);
  CHECK(from_file["summary"]["pods"] == 33);
  CHECK(from_file["summary"]["terminalPods"] == 1);
  for (Json* report : {&from_api, &from_file}) {
    (*report)["summary"].erase("pods");
    (*report)["summary"].erase("terminalPods");
  }
  CHECK(from_api == from_file);
  // Nodes, then pods, page by page; then resource.k8s.io v1, v1beta2, v1beta1 (not served).
  std::vector<std::string> paths;
  for (const testing::Request& r : server.requests()) {
    if (paths.empty() || paths.back() != r.path) paths.push_back(r.path);
  }
  CHECK(paths == std::vector<std::string>{"/api/v1/nodes", "/api/v1/pods",
                                          "/apis/resource.k8s.io/v1/resourceslices",
                                          "/apis/resource.k8s.io/v1beta2/resourceslices",
                                          "/apis/resource.k8s.io/v1beta1/resourceslices"});
  // 13 nodes in pages of 4: 4 requests.
  size_t node_pages = 0;
  for (const testing::Request& r : server.requests()) node_pages += r.path == "/api/v1/nodes";
  CHECK(node_pages == 4);
}

TEST_CASE("fleet api: forbidden and unauthorized say what to grant or fix") {
  Cluster cluster;
  cluster.pods_status = 403;
  FakeListServer server(cluster.dir.path(), [&](const httplib::Request& q, httplib::Response& s) {
    cluster.answer(q, s);
  });
  const std::string config = cluster.kubeconfig(server.port());
  const auto forbidden = gpuadmit::testing::run_command(kBinary + " fleet --live --policy " +
                                                        kPolicy + " --kubeconfig " + config);
  CHECK(forbidden.exit_code == 2);
  CHECK(forbidden.out == "");
  CHECK(forbidden.err ==
        "gpuadmit fleet: cannot list /api/v1/pods (kubeconfig " + config +
            ", context test): GET /api/v1/pods: the API server answered 403 (Forbidden): pods is "
            "forbidden: User \"reader\" cannot list resource \"pods\" in API group \"\" at the "
            "cluster scope; gpuadmit fleet --live needs list on nodes and pods at the cluster "
            "scope (a ClusterRole; docs/fleet.md, \"From the API\")\n");
  const std::string wrong = cluster.kubeconfig(server.port(), "stale-token");
  const auto unauthorized = gpuadmit::testing::run_command(kBinary + " fleet --live --policy " +
                                                           kPolicy + " --kubeconfig " + wrong);
  CHECK(unauthorized.exit_code == 2);
  CHECK(unauthorized.err.find("answered 401 (Unauthorized): Unauthorized; the credentials were "
                              "refused: check the kubeconfig's user or token\n") !=
        std::string::npos);
}

TEST_CASE("fleet api: an API server that is not there, within the timeout") {
  Cluster cluster;
  int port = 0;
  {
    FakeListServer gone(cluster.dir.path(), [](const httplib::Request&, httplib::Response&) {});
    port = gone.port();
  }
  const std::string config = cluster.kubeconfig(port);
  const auto r = gpuadmit::testing::run_command(kBinary + " fleet --live --timeout 2 --policy " +
                                                kPolicy + " --kubeconfig " + config);
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "gpuadmit fleet: cannot list /api/v1/nodes (kubeconfig " + config +
            ", context test): no answer from the API server at 127.0.0.1:" + std::to_string(port) +
            ": cannot connect to 127.0.0.1:" + std::to_string(port) + "\n");
}

}  // namespace
}  // namespace fleet_api_test
}  // namespace gpuadmit::kube
