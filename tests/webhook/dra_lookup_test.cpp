// `gpuadmit serve --dra-lookup`: the flags, the in-cluster configuration it needs, and its
// lookup counters in /metrics. The lookup itself is tested in tests/kube/ against a simulated
// API server.

#include <catch2/catch.hpp>

#include <string>

#include "tests/webhook/support.h"

namespace dra_lookup_test {

using namespace gpuadmit::testing;

namespace {
// Not in a pod, whatever the machine running the tests is.
const std::string kOutsidePod = "env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT ";
}  // namespace

TEST_CASE("dra lookup: needs the in-cluster service environment, flags checked") {
  TempDir dir;
  generate_certs(dir.path());
  const std::string serve = kOutsidePod + GPUADMIT_BINARY + " serve --tls-cert " +
                            (dir / "tls.crt") + " --tls-key " + (dir / "tls.key") +
                            " --listen 127.0.0.1:0 --metrics-listen off";
  auto r = run_command(serve + " --dra-lookup");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--dra-lookup: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
                   "set: not running in a pod") != std::string::npos);
  r = run_command(serve + " --dra-lookup --dra-lookup-timeout 5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--dra-lookup-timeout must be a whole number from 10 to 10000, not \"5\"") !=
        std::string::npos);
  r = run_command(serve + " --dra-lookup-timeout 300");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "gpuadmit serve: --dra-lookup-timeout needs --dra-lookup\n");
}

TEST_CASE("dra lookup: on, the server says so and exposes its counters") {
  TempDir dir;
  generate_certs(dir.path());
  ServerProcess server(
      dir.path(), {"--dra-lookup", "--dra-lookup-timeout", "200"}, "",
      {{"KUBERNETES_SERVICE_HOST", "127.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "1"}});
  REQUIRE(server.wait_ready());
  CHECK(server.log().find("\"dra_lookup\":true") != std::string::npos);
  const std::string metrics = server.metrics();
  for (const char* result : {"found", "not_found", "unavailable", "cache_hit"}) {
    CHECK(metric_value(metrics,
                       std::string("gpuadmit_dra_lookups_total{result=\"") + result + "\"}") == 0);
  }
}

TEST_CASE("dra lookup: off by default, no counters") {
  TempDir dir;
  generate_certs(dir.path());
  ServerProcess server(dir.path());
  REQUIRE(server.wait_ready());
  CHECK(server.log().find("\"dra_lookup\":false") != std::string::npos);
  CHECK(server.metrics().find("gpuadmit_dra_lookups_total") == std::string::npos);
}
}  // namespace dra_lookup_test
