// The connection pool against the real binary: connections that wait (silent, idle, a request
// half sent) hold no thread, and a request arriving in many pieces and TLS records is one request.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "engine/json.h"
#include "tests/webhook/support.h"

namespace connection_pool_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Json;

// The real binary with one thread serving connections, and a client's options for it.
struct OneThreadServer {
  OneThreadServer() : server((generate_certs(dir.path()), dir.path()), {"--threads", "1"}) {
    options.ca_path = dir / "ca.crt";
  }
  TempDir dir;
  ServerProcess server;
  TlsClient::Options options;
};

std::string post_head(std::size_t length) {
  return "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(length) + "\r\n\r\n";
}

}  // namespace

TEST_CASE("pool: with one thread, silent, idle and half-sent connections do not hold it") {
  OneThreadServer s;
  ServerProcess& server = s.server;
  const TlsClient::Options& options = s.options;
  REQUIRE(server.wait_ready());

  // A TCP connection that never starts its handshake.
  const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  // A TLS connection that says nothing yet, and one whose request is half sent.
  TlsClient idle, half;
  REQUIRE(idle.connect(server.port(), options).empty());
  REQUIRE(half.connect(server.port(), options).empty());
  const std::string half_review = admission_review("half", kGpuPod);
  const std::size_t cut = half_review.size() / 2;
  REQUIRE(half.send_raw(post_head(half_review.size()) + half_review.substr(0, cut)));

  // With a thread per connection, the only thread would now be waiting for the rest of the
  // half-sent body (until the 5 s read timeout), and these would fail on the client's timeout.
  TlsClient active;
  REQUIRE(active.connect(server.port(), options).empty());
  for (int i = 0; i < 20; ++i) {
    const std::string uid = "active-" + std::to_string(i);
    auto res = active.request("POST", "/mutate", admission_review(uid, kGpuPod));
    REQUIRE(res.has_value());
    CHECK(res->status == 200);
    CHECK(Json::parse(res->body)["response"]["uid"] == uid);
  }
  // The waiting connections are still served when they go on.
  REQUIRE(half.send_raw(half_review.substr(cut)));
  auto res = half.read_response();
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
  CHECK(Json::parse(res->body)["response"]["uid"] == "half");
  res = idle.request("GET", "/healthz");
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
  ::close(silent);
}

TEST_CASE("pool: a large review sent in pieces over many TLS records is one request") {
  OneThreadServer s;
  REQUIRE(s.server.wait_ready());
  TlsClient client;
  REQUIRE(client.connect(s.server.port(), s.options).empty());

  // ~100 KB: an annotation pads the pod past six 16 KiB TLS records.
  std::string pod = kGpuPod;
  const std::string labels = R"("labels":{"app":"train"})";
  const std::size_t at = pod.find(labels);
  REQUIRE(at != std::string::npos);
  pod.insert(at + labels.size(), R"(,"annotations":{"note":")" + std::string(100000, 'x') + "\"}");
  const std::string review = admission_review("large", pod);
  const std::string request = post_head(review.size()) + review;
  // Pieces that split the headers, then the body, at odd places; each write is its own record.
  const std::size_t cuts[] = {7, 60, 20000, 20001, 70000, request.size()};
  std::size_t from = 0;
  for (std::size_t to : cuts) {
    REQUIRE(client.send_raw(request.substr(from, to - from)));
    from = to;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto res = client.read_response();
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
  const Json body = Json::parse(res->body);
  CHECK(body["response"]["uid"] == "large");
  CHECK(body["response"]["patchType"] == "JSONPatch");
  // The connection is kept for the next request.
  res = client.request("POST", "/mutate", admission_review("next", kGpuPod));
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
  CHECK(Json::parse(res->body)["response"]["uid"] == "next");
}
}  // namespace connection_pool_test
