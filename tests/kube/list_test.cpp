// kube/list.h against a local HTTPS server answering as the API server does: pages followed by
// their continue token, the field selector and token sent, an expired token restarting the list,
// 403 with the API's message, no server, a server too slow, and client-certificate TLS.

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "kube/list.h"
#include "tests/kube/fake_list_server.h"

namespace gpuadmit::kube {
namespace list_test {
namespace {

using namespace std::chrono_literals;
using testing::FakeListServer;
using testing::TempDir;
using testing::TestPki;

Json nodes(int from, int to) {
  Json items = Json::array();
  for (int i = from; i < to; ++i) {
    items.push_back({{"kind", "Node"}, {"metadata", {{"name", "n" + std::to_string(i)}}}});
  }
  return items;
}

// Seven nodes, at most three a page whatever the limit asks (the server may send fewer).
void paged(const httplib::Request& req, httplib::Response& res) {
  const std::string token = req.get_param_value("continue");
  const int from = token.empty() ? 0 : std::stoi(token.substr(1));
  const int to = std::min(from + 3, 7);
  res.set_content(
      testing::list_page("NodeList", nodes(from, to), to < 7 ? "c" + std::to_string(to) : ""),
      "application/json");
}

std::vector<std::string> names_of(const std::vector<std::string>& pages) {
  std::vector<std::string> out;
  for (const std::string& p : pages) {
    const Json page = Json::parse(p);
    for (const Json& item : page["items"]) out.push_back(item["metadata"]["name"]);
  }
  return out;
}

struct Client {
  TempDir dir;
  TestPki pki{dir.path()};
  ApiEndpoint endpoint(int port, std::chrono::milliseconds timeout = 5000ms) const {
    return {"127.0.0.1", port, dir.path() + "/ca.crt", timeout};
  }
};

TEST_CASE("kube list: every page, following continue, with the selector and the token") {
  Client c;
  FakeListServer server(c.dir.path(), paged);
  const ApiClient api(c.endpoint(server.port()));
  std::vector<std::string> pages;
  const ListResult r =
      list_all(api, "tok", "/api/v1/pods",
               {.field_selector = "status.phase!=Succeeded,status.phase!=Failed", .limit = 500},
               [&](const std::string& page) {
                 pages.push_back(page);
                 return true;
               });
  CHECK(r.ok());
  CHECK(r.pages == 3);
  CHECK(names_of(pages) == std::vector<std::string>{"n0", "n1", "n2", "n3", "n4", "n5", "n6"});
  const auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  for (size_t i = 0; i < requests.size(); ++i) {
    CHECK(requests[i].path == "/api/v1/pods");
    CHECK(requests[i].authorization == "Bearer tok");
    CHECK(requests[i].params.find("limit")->second == "500");
    CHECK(requests[i].params.find("fieldSelector")->second ==
          "status.phase!=Succeeded,status.phase!=Failed");
  }
  CHECK(requests[0].params.count("continue") == 0);
  CHECK(requests[1].params.find("continue")->second == "c3");
  CHECK(requests[2].params.find("continue")->second == "c6");
}

TEST_CASE("kube list: the caller stops the list by returning false") {
  Client c;
  FakeListServer server(c.dir.path(), paged);
  const ApiClient api(c.endpoint(server.port()));
  const ListResult r =
      list_all(api, "", "/api/v1/nodes", {}, [](const std::string&) { return false; });
  CHECK(r.ok());
  CHECK(r.pages == 1);
  CHECK(server.requests().size() == 1);
}

TEST_CASE("kube list: an expired continue token (410) restarts the list once") {
  Client c;
  int expired = 0;
  FakeListServer server(c.dir.path(), [&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_param_value("continue") == "c3" && expired++ == 0) {
      res.status = 410;
      res.set_content(testing::status_body(410, "Expired",
                                           "The provided continue parameter is too old to "
                                           "display a consistent list result."),
                      "application/json");
      return;
    }
    paged(req, res);
  });
  const ApiClient api(c.endpoint(server.port()));
  std::vector<std::string> pages;
  const ListResult r = list_all(api, "", "/api/v1/nodes", {}, [&](const std::string& page) {
    pages.push_back(page);
    return true;
  });
  CHECK(r.ok());
  // n0..n2, then the restart from the first page: n0..n6. The caller keeps the later copies.
  CHECK(names_of(pages) ==
        std::vector<std::string>{"n0", "n1", "n2", "n0", "n1", "n2", "n3", "n4", "n5", "n6"});
}

TEST_CASE("kube list: 403 says who may not list what, as the API server put it") {
  Client c;
  FakeListServer server(c.dir.path(), [](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content(testing::status_body(403, "Forbidden",
                                         "pods is forbidden: User \"system:serviceaccount:ml:"
                                         "reader\" cannot list resource \"pods\" in API group "
                                         "\"\" at the cluster scope"),
                    "application/json");
  });
  const ApiClient api(c.endpoint(server.port()));
  const ListResult r =
      list_all(api, "t", "/api/v1/pods", {}, [](const std::string&) { return true; });
  CHECK(r.status == 403);
  CHECK(r.error ==
        "GET /api/v1/pods: the API server answered 403 (Forbidden): pods is forbidden: User "
        "\"system:serviceaccount:ml:reader\" cannot list resource \"pods\" in API group \"\" at "
        "the cluster scope");
}

TEST_CASE("kube list: no server, and a server too slow: errors within the timeout") {
  Client c;
  int closed_port = 0;
  {
    FakeListServer gone(c.dir.path(), paged);
    closed_port = gone.port();
  }
  const ApiClient nobody(c.endpoint(closed_port, 2000ms));
  const ListResult refused =
      list_all(nobody, "", "/api/v1/nodes", {}, [](const std::string&) { return true; });
  CHECK(refused.status == 0);
  CHECK(refused.error ==
        "no answer from the API server at 127.0.0.1:" + std::to_string(closed_port) +
            ": cannot connect to 127.0.0.1:" + std::to_string(closed_port));
  FakeListServer slow(c.dir.path(), [](const httplib::Request& req, httplib::Response& res) {
    std::this_thread::sleep_for(1500ms);
    paged(req, res);
  });
  const ApiClient api(c.endpoint(slow.port(), 300ms));
  const auto start = std::chrono::steady_clock::now();
  const ListResult late =
      list_all(api, "", "/api/v1/nodes", {}, [](const std::string&) { return true; });
  CHECK(late.status == 0);
  CHECK(late.error == "no answer from the API server at 127.0.0.1:" + std::to_string(slow.port()) +
                          ": no answer within 300 ms");
  CHECK(std::chrono::steady_clock::now() - start < 1400ms);
}

TEST_CASE("kube list: a server that demands a client certificate gets the kubeconfig's") {
  Client c;
  FakeListServer server(c.dir.path(), paged, /*require_client_cert=*/true);
  const ApiClient with(c.endpoint(server.port()), {c.pki.client.cert_pem, c.pki.client.key_pem});
  const ListResult ok =
      list_all(with, "", "/api/v1/nodes", {}, [](const std::string&) { return true; });
  CHECK(ok.ok());
  CHECK(ok.pages == 3);
  const ApiClient without(c.endpoint(server.port()));
  const ListResult refused =
      list_all(without, "", "/api/v1/nodes", {}, [](const std::string&) { return true; });
  CHECK(refused.status == 0);
  CHECK_FALSE(refused.ok());
}

TEST_CASE("kube list: an answer that is no list is an error, not an empty list") {
  Client c;
  FakeListServer server(c.dir.path(), [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>proxy login</html>", "text/html");
  });
  const ApiClient api(c.endpoint(server.port()));
  const ListResult r =
      list_all(api, "", "/api/v1/nodes", {}, [](const std::string&) { return true; });
  CHECK(r.error == "GET /api/v1/nodes: the answer is not a JSON list");
}

TEST_CASE("kube list: query values are percent-encoded") {
  CHECK(query_escape("status.phase!=Failed,a b") == "status.phase%21%3DFailed%2Ca%20b");
  CHECK(query_escape("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MX0=") ==
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MX0%3D");
}

}  // namespace
}  // namespace list_test
}  // namespace gpuadmit::kube
