// Process lifecycle against the real binary: startup time and errors, exclusive port, client
// certificates, and the SIGTERM drain with a request in flight.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "certs/certs.h"
#include "engine/json.h"
#include "tests/support/eventually.h"
#include "tests/webhook/support.h"

namespace lifecycle_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Json;
namespace certs = gpuadmit::certs;

certs::PemPair client_pair(const certs::PemPair& ca) {
  certs::LeafProfile profile;
  profile.common_name = "kube-apiserver";
  profile.names = {"kube-apiserver"};
  profile.client_auth = true;
  return std::get<certs::PemPair>(certs::issue_certificate(ca, profile));
}

}  // namespace

// The startup time itself is measured by bench/webhook_load.sh (a benchmark, not a timed test):
// here the ready line must report it and the server must answer once it says it is ready.
TEST_CASE("lifecycle: the ready line reports the startup time, and /healthz answers right after") {
  TempDir dir;
  generate_certs(dir.path());
  ServerProcess server(dir.path());
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  TlsClient client;
  REQUIRE(client.connect(server.port(), options).empty());
  CHECK(client.request("GET", "/healthz")->status == 200);
  const std::string log = server.log();
  const size_t at = log.find("\"startup_us\":");
  REQUIRE(at != std::string::npos);
  CHECK(std::stol(log.substr(at + 13)) > 0);
}

TEST_CASE("lifecycle: startup errors are listed and exit 2") {
  TempDir dir;
  auto r = run_command(std::string(GPUADMIT_BINARY) + " serve --tls-cert " + (dir / "none.crt") +
                       " --tls-key " + (dir / "none.key") +
                       " --listen nonsense --policy /nonexistent/policy.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--listen nonsense: expected HOST:PORT or :PORT") != std::string::npos);
  CHECK(r.err.find("none.crt: cannot read the certificate file") != std::string::npos);
  CHECK(r.err.find("/nonexistent/policy.yaml") != std::string::npos);
  r = run_command(std::string(GPUADMIT_BINARY) + " serve --threads 0");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--threads must be a whole number from 1 to 4096") != std::string::npos);
}

TEST_CASE("lifecycle: a second server cannot share the port (no SO_REUSEPORT)") {
  TempDir dir;
  generate_certs(dir.path());
  ServerProcess first(dir.path());
  REQUIRE(first.wait_ready());
  auto r = run_command(std::string(GPUADMIT_BINARY) + " serve --tls-cert " + (dir / "tls.crt") +
                       " --tls-key " + (dir / "tls.key") + " --metrics-listen off --listen " +
                       "127.0.0.1:" + std::to_string(first.port()));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot bind") != std::string::npos);
}

TEST_CASE("lifecycle: --client-ca requires a client certificate from that CA") {
  TempDir dir;
  generate_certs(dir.path());
  const certs::PemPair client_ca = std::get<certs::PemPair>(certs::generate_ca("clients", 30));
  const certs::PemPair rogue_ca = std::get<certs::PemPair>(certs::generate_ca("rogue", 30));
  const certs::PemPair good = client_pair(client_ca), rogue = client_pair(rogue_ca);
  write_file(dir / "client-ca.crt", client_ca.cert_pem);
  write_file(dir / "good.crt", good.cert_pem);
  write_file(dir / "good.key", good.key_pem);
  write_file(dir / "rogue.crt", rogue.cert_pem);
  write_file(dir / "rogue.key", rogue.key_pem);

  ServerProcess server(dir.path(), {"--client-ca", dir / "client-ca.crt"});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  const std::string review = admission_review("mtls", kGpuPod);
  // A kubelet's probe presents no certificate: the probes answer on the plain metrics port.
  CHECK(plain_get(server.metrics_port(), "/healthz") == "ok\n");
  CHECK(plain_get(server.metrics_port(), "/readyz") == "ok\n");

  // Refused: with TLS 1.3 the server's verdict may arrive after the client's handshake ends,
  // so the refusal shows as a failed handshake or a failed first request.
  auto refused = [&](const TlsClient::Options& o) {
    TlsClient client;
    if (!client.connect(server.port(), o).empty()) return true;
    auto res = client.request("POST", "/mutate", review);
    return !res.has_value();
  };
  CHECK(refused(options));
  TlsClient::Options with_rogue = options;
  with_rogue.client_cert = dir / "rogue.crt";
  with_rogue.client_key = dir / "rogue.key";
  CHECK(refused(with_rogue));
  TlsClient::Options with_rogue12 = with_rogue;
  with_rogue12.max_tls_version = TLS1_2_VERSION;
  CHECK(refused(with_rogue12));

  TlsClient::Options with_good = options;
  with_good.client_cert = dir / "good.crt";
  with_good.client_key = dir / "good.key";
  TlsClient client;
  REQUIRE(client.connect(server.port(), with_good).empty());
  auto res = client.request("POST", "/mutate", review);
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
}

TEST_CASE("lifecycle: SIGTERM fails /readyz first, finishes the request in flight, exits 0") {
  TempDir dir;
  generate_certs(dir.path());
  // The delay is the server's time to read the half request sent before the signal (it takes
  // microseconds); every step below waits for an event, not for a time.
  ServerProcess server(dir.path(), {"--shutdown-delay", "1"});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  const std::string review = admission_review("in-flight", kGpuPod);

  TlsClient in_flight, prober;
  REQUIRE(in_flight.connect(server.port(), options).empty());
  REQUIRE(prober.connect(server.port(), options).empty());
  CHECK(prober.request("GET", "/readyz")->status == 200);
  // Headers and half of the body sent when the signal comes.
  const size_t half = review.size() / 2;
  REQUIRE(
      in_flight.send_raw("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         "application/json\r\nContent-Length: " +
                         std::to_string(review.size()) + "\r\n\r\n" + review.substr(0, half)));
  server.signal(SIGTERM);

  // /readyz fails once the signal is handled, on the connection kept alive.
  std::optional<HttpResponse> ready;
  CHECK(eventually([&] {
    ready = prober.request("GET", "/readyz");
    return !ready || ready->status != 200;
  }));
  REQUIRE(ready.has_value());
  CHECK(ready->status == 503);
  CHECK(ready->body == "draining\n");
  prober.close();
  CHECK_FALSE(server.wait_exit(0).has_value());

  // Past the delay the listener is closed: a new connection is refused.
  CHECK(eventually([&] {
    TlsClient late;
    return !late.connect(server.port(), options).empty();
  }));
  CHECK_FALSE(server.wait_exit(0).has_value());  // the request in flight holds it
  REQUIRE(in_flight.send_raw(review.substr(half)));
  auto res = in_flight.read_response();
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
  CHECK(res->header("connection") == "close");
  CHECK(Json::parse(res->body)["response"]["uid"] == "in-flight");

  const auto code = server.wait_exit(static_cast<int>(kEventDeadline.count()));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  const std::string log = server.log();
  CHECK(log.find("\"msg\":\"draining\"") < log.find("\"uid\":\"in-flight\""));
  CHECK(log.find("\"msg\":\"stopped\",\"clean\":true") != std::string::npos);
}

TEST_CASE("lifecycle: --shutdown-deadline closes a request that never finishes, exits 1") {
  TempDir dir;
  generate_certs(dir.path());
  ServerProcess server(dir.path(), {"--shutdown-deadline", "1", "--request-timeout", "60"});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  TlsClient slow;
  REQUIRE(slow.connect(server.port(), options).empty());
  const std::string head =
      "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000\r\n\r\n";
  REQUIRE(slow.send_raw(head));
  const auto start = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  // A byte every 100 ms: the request is alive, but will not be whole before the deadline.
  std::optional<int> code;
  for (int i = 0; i < 300 && !code; ++i) {
    slow.send_raw("{");
    code = server.wait_exit(100);
  }
  REQUIRE(code.has_value());
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  CHECK(*code == 1);
  // Not before the deadline; and well before the 60 s request timeout, so the deadline ended it
  // (no tighter bound: a loaded machine may take seconds to deliver the signal).
  CHECK(took >= 900);
  CHECK(took < 30000);
  const std::string log = server.log();
  CHECK(log.find("\"msg\":\"stopped\",\"clean\":false") != std::string::npos);
}

TEST_CASE("lifecycle: --shutdown-delay keeps serving with /readyz failing, on both ports") {
  TempDir dir;
  generate_certs(dir.path());
  // The only time this test depends on: a new connection made within 2 s of /readyz failing.
  ServerProcess server(dir.path(), {"--shutdown-delay", "2"});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  CHECK(plain_get(server.metrics_port(), "/readyz") == "ok\n");
  server.signal(SIGTERM);
  CHECK(eventually([&] { return plain_get(server.metrics_port(), "/readyz") == "draining\n"; }));
  CHECK(plain_get(server.metrics_port(), "/healthz") == "ok\n");
  TlsClient late;  // a new connection during the delay is still served
  REQUIRE(late.connect(server.port(), options).empty());
  auto res = late.request("POST", "/mutate", admission_review("during-delay", kGpuPod));
  REQUIRE(res.has_value());
  CHECK(res->status == 200);
  const auto code = server.wait_exit(static_cast<int>(kEventDeadline.count()));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}
}  // namespace lifecycle_test
