// Issue 11: a policy file replaced by text yaml-cpp 0.7 loops on (`,a: 1` grew a server by
// 1.3 GB/s until the kernel killed it) is one failed reload: one error logged with its line, the
// failure counter up, the previous policy still answering, and the server's memory flat.

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "engine/json.h"
#include "tests/webhook/support.h"

namespace reload_hostile_policy_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Json;

// A /proc/<pid>/status field in KiB (VmRSS: resident now; VmHWM: the peak so far).
long status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

constexpr long kGrowthLimitKib = 64 * 1024;

// Waits (5 s at most) for the failure counter to reach `failures`; fails at once, rather than
// letting the machine swap, if the server's RSS grows by more than kGrowthLimitKib meanwhile.
bool wait_for_failure(const ServerProcess& server, double failures, long baseline_kib) {
  const std::string series = R"(gpuadmit_policy_reloads_total{result="failure"})";
  for (int waited = 0; waited < 5000; waited += 20) {
    const long rss = status_kib(server.pid(), "VmRSS");
    INFO("VmRSS " << rss << " KiB, baseline " << baseline_kib << " KiB");
    REQUIRE(rss - baseline_kib < kGrowthLimitKib);
    if (metric_value(server.metrics(), series) >= failures) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("reload: a policy yaml-cpp loops on is one failed reload, memory stays flat",
          "[reload][issue11]") {
  TempDir dir;
  generate_certs(dir.path());
  const std::string original = slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
  const std::string policy = dir / "policy.yaml";
  write_file(policy, original);

  ServerProcess server(dir.path(), {"--policy", policy});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  TlsClient client;
  REQUIRE(client.connect(server.port(), options).empty());
  const std::string review = admission_review("hostile", kGpuPod);
  auto answer = [&] {
    auto res = client.request("POST", "/mutate", review);
    REQUIRE(res.has_value());
    REQUIRE(res->status == 200);
    return Json::parse(res->body);
  };
  const Json before = answer();
  const long baseline_rss = status_kib(server.pid(), "VmRSS");
  const long baseline_peak = status_kib(server.pid(), "VmHWM");
  REQUIRE(baseline_rss > 0);

  struct Hostile {
    const char* text;
    const char* error;  // the one policy error logged
  };
  // Each one made yaml-cpp 0.7's LoadAll append empty documents forever (yaml-cpp #1040).
  const Hostile hostile[] = {
      {",a: 1", "invalid YAML: did not find expected node content (found \\\",\\\")"},
      {"apiVersion: gpuadmit.io/v1alpha1\n, kind: GPUPolicy\n",
       "invalid YAML: did not find expected node content (found \\\",\\\")"},
      {"- a\n, b\n", "invalid YAML: did not find expected node content (found \\\",\\\")"},
  };
  double failures = 0;
  for (const Hostile& h : hostile) {
    INFO(h.text);
    replace_file(policy, h.text);
    failures += 1;
    REQUIRE(wait_for_failure(server, failures, baseline_rss));
    CHECK(answer() == before);  // the previous policy keeps serving
  }
  // One failure per change, not per poll: three more watch intervals change nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  CHECK(metric_value(server.metrics(), R"(gpuadmit_policy_reloads_total{result="failure"})") ==
        failures);
  CHECK(metric_value(server.metrics(), "gpuadmit_policy_generation") == 1);

  const std::string log = server.log();
  CHECK(count(log, "\"msg\":\"policy reload failed; the previous policy keeps serving\"") == 3);
  CHECK(count(log, "\"msg\":\"policy error\"") == 3);
  CHECK(count(log, std::string(hostile[0].error) + " (" + policy + ":1:1)") == 1);
  CHECK(count(log, std::string(hostile[1].error) + " (" + policy + ":2:1)") == 1);
  CHECK(count(log, std::string(hostile[2].error) + " (" + policy + ":2:1)") == 1);

  // The peak RSS, not just the current one: a burst that was freed again still fails.
  const long peak = status_kib(server.pid(), "VmHWM");
  INFO("VmHWM " << peak << " KiB, before " << baseline_peak << " KiB");
  CHECK(peak - baseline_peak < kGrowthLimitKib);

  // And a valid file is picked up again.
  replace_file(policy, original);
  for (int waited = 0; waited < 5000; waited += 20) {
    if (metric_value(server.metrics(), "gpuadmit_policy_generation") >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(metric_value(server.metrics(), "gpuadmit_policy_generation") == 2);
  CHECK(answer() == before);
}
}  // namespace reload_hostile_policy_test
