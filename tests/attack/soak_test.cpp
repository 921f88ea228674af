// Soak (issue 15): good clients at a steady rate for 60 s (× GPUADMIT_ATTACK_SCALE) while the
// serving certificate rotates every 3 s (kubelet's atomic ..data swap) and the policy file is
// replaced every 2 s, cycling valid A → invalid → valid B → A. Required: no failed good request,
// every answer the one policy A or policy B gives offline, a probe right after each reload
// answered by the new policy, and RSS at the end within 5% of RSS after warm-up.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "certs/certs.h"
#include "engine/json.h"
#include "tests/webhook/support.h"

namespace soak_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Json;
namespace certs = gpuadmit::certs;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double rss_mib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

// kubelet's atomic writer for a Secret volume: a new ..<version> directory, ..data swapped.
void publish(const std::string& dir, int version, const certs::PemPair& pair) {
  const std::string name = "..v" + std::to_string(version);
  fs::create_directory(dir + "/" + name);
  write_file(dir + "/" + name + "/tls.crt", pair.cert_pem);
  write_file(dir + "/" + name + "/tls.key", pair.key_pem);
  fs::create_directory_symlink(name, dir + "/..data_tmp");
  fs::rename(dir + "/..data_tmp", dir + "/..data");
  if (!fs::is_symlink(dir + "/tls.crt")) {
    fs::create_symlink("..data/tls.crt", dir + "/tls.crt");
    fs::create_symlink("..data/tls.key", dir + "/tls.key");
  }
}

std::string answer_of(const std::string& body, const std::string& policy) {
  auto r = run_command(std::string(GPUADMIT_BINARY) + " review --policy " + policy, body);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out)["response"].dump();
}

}  // namespace

TEST_CASE("attack: soak with certificate rotation and policy replacement", "[attack][soak]") {
  const char* s = std::getenv("GPUADMIT_ATTACK_SCALE");
  const int scale = std::max(1, s == nullptr ? 1 : std::atoi(s));
  TempDir dir;
  const certs::PemPair ca = std::get<certs::PemPair>(certs::generate_ca("soak CA", 30));
  write_file(dir / "ca.crt", ca.cert_pem);
  auto issue = [&] {
    certs::LeafProfile profile;
    profile.common_name = kServiceName;
    profile.names = certs::service_dns_names("gpuadmit", kNamespace);
    return std::get<certs::PemPair>(certs::issue_certificate(ca, profile));
  };
  int version = 0;
  publish(dir.path(), ++version, issue());

  // Policy A is the default; B taints its GPU pool with another key, so the toleration differs.
  const std::string a_text = slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml");
  std::string b_text = a_text;
  const std::string from = "{key: nvidia.com/gpu, effect: NoSchedule}";
  REQUIRE(b_text.find(from) != std::string::npos);
  b_text.replace(b_text.find(from), from.size(), "{key: example.com/gpu, effect: NoSchedule}");
  write_file(dir / "a.yaml", a_text);
  write_file(dir / "b.yaml", b_text);
  const std::string review = admission_review("soak", kGpuPod);
  const std::string answer_a = answer_of(review, dir / "a.yaml");
  const std::string answer_b = answer_of(review, dir / "b.yaml");
  REQUIRE(answer_a != answer_b);
  const std::string policy = dir / "policy.yaml";
  write_file(policy, a_text);

  ServerProcess server(dir.path(), {"--policy", policy});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";

  std::atomic<bool> stop{false};
  std::atomic<int> sent{0}, failed{0}, wrong{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 2; ++c) {
    clients.emplace_back([&] {
      TlsClient client;
      bool open = false;
      for (int n = 0; !stop.load(); ++n) {
        if (!open || n % 20 == 0) open = client.connect(server.port(), options).empty();
        std::optional<HttpResponse> res;
        if (open) res = client.request("POST", "/mutate", review);
        ++sent;
        if (!res || res->status != 200) {
          ++failed;
          open = false;
        } else {
          const std::string got = Json::parse(res->body)["response"].dump();
          if (got != answer_a && got != answer_b) ++wrong;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }

  const auto start = Clock::now();
  const auto duration = std::chrono::seconds(60 * scale);
  double rss_warm = -1;
  int reloads_checked = 0;
  const std::vector<std::pair<const std::string*, const std::string*>> cycle = {
      {&a_text, &answer_a}, {nullptr, nullptr}, {&b_text, &answer_b}};
  std::string invalid = "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nspec:\n  classes: [\n";
  const std::string* current_answer = &answer_a;
  for (int tick = 1; Clock::now() - start < duration; ++tick) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (rss_warm < 0 && Clock::now() - start > std::chrono::seconds(10)) {
      rss_warm = rss_mib(server.pid());
    }
    if (tick % 3 == 0) publish(dir.path(), ++version, issue());
    if (tick % 2 == 0) {
      const auto& [text, answer] = cycle[(tick / 2) % cycle.size()];
      const double generation = metric_value(server.metrics(), "gpuadmit_policy_generation");
      replace_file(policy, text == nullptr ? invalid : *text);
      if (text == nullptr) continue;
      // Written even when unchanged in meaning: a new generation either way.
      for (int w = 0; w < 100; ++w) {
        if (metric_value(server.metrics(), "gpuadmit_policy_generation") > generation) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      current_answer = answer;
      TlsClient probe;
      REQUIRE(probe.connect(server.port(), options).empty());
      auto res = probe.request("POST", "/mutate", review);
      REQUIRE(res.has_value());
      CHECK(Json::parse(res->body)["response"].dump() == *current_answer);
      ++reloads_checked;
    }
  }
  stop.store(true);
  for (std::thread& t : clients) t.join();
  const double rss_end = rss_mib(server.pid());

  char line[256];
  std::snprintf(line, sizeof line,
                "%-34s good %d sent, %d failed, %d wrong | %d reloads checked, %d certificates | "
                "RSS %.1f → %.1f MiB\n",
                "soak (rotation + policy swaps)", sent.load(), failed.load(), wrong.load(),
                reloads_checked, version, rss_warm, rss_end);
  std::fputs(line, stdout);
  std::ofstream("attack-results.txt", std::ios::app) << line;
  INFO(line);
  CHECK(sent.load() > 1000 * scale);
  CHECK(failed.load() == 0);
  CHECK(wrong.load() == 0);
  CHECK(reloads_checked >= 10 * scale);
  CHECK(rss_end <= rss_warm * 1.05);
}
}  // namespace soak_test
