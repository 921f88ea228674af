// Hot reload against the real binary: certificate rotation through a Secret volume's ..data
// symlink swap under concurrent load with zero failed requests, and policy reload good and bad.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "certs/certs.h"
#include "certs/key_pair.h"
#include "engine/json.h"
#include "tests/support/eventually.h"
#include "tests/webhook/support.h"

namespace reload_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Json;
namespace certs = gpuadmit::certs;
namespace fs = std::filesystem;

certs::PemPair issue(const certs::PemPair& ca, int days) {
  certs::LeafProfile profile;
  profile.common_name = kServiceName;
  profile.names = certs::service_dns_names("gpuadmit", kNamespace);
  profile.valid_days = days;
  return std::get<certs::PemPair>(certs::issue_certificate(ca, profile));
}

std::string serial_of(const certs::PemPair& pair) {
  auto loaded = certs::KeyPair::from_pem(pair.cert_pem, pair.key_pem);
  return std::get<certs::KeyPairPtr>(loaded)->serial_hex();
}

// What kubelet's atomic writer does for a Secret volume: files in a timestamped directory,
// ..data → that directory, tls.crt → ..data/tls.crt; an update swaps ..data by rename.
void publish(const std::string& dir, const std::string& version, const std::string& cert_pem,
             const std::string& key_pem) {
  const std::string data_dir = dir + "/.." + version;
  fs::create_directory(data_dir);
  write_file(data_dir + "/tls.crt", cert_pem);
  write_file(data_dir + "/tls.key", key_pem);
  fs::create_directory_symlink(".." + version, dir + "/..data_tmp");
  fs::rename(dir + "/..data_tmp", dir + "/..data");
  if (!fs::is_symlink(dir + "/tls.crt")) {
    fs::create_symlink("..data/tls.crt", dir + "/tls.crt");
    fs::create_symlink("..data/tls.key", dir + "/tls.key");
  }
}

bool wait_for_metric(const ServerProcess& server, const std::string& series, double at_least) {
  return eventually([&] { return metric_value(server.metrics(), series) >= at_least; });
}

Json offline(const std::string& body, const std::string& policy) {
  auto r = run_command(std::string(GPUADMIT_BINARY) + " review --policy " + policy, body);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

}  // namespace

TEST_CASE("reload: certificate rotation under load fails no request and serves the new pair") {
  TempDir dir;
  const certs::PemPair ca = std::get<certs::PemPair>(certs::generate_ca("rotation CA", 30));
  write_file(dir / "ca.crt", ca.cert_pem);
  const certs::PemPair first = issue(ca, 100), second = issue(ca, 200), third = issue(ca, 300);
  const std::string first_serial = serial_of(first), second_serial = serial_of(second),
                    third_serial = serial_of(third);
  publish(dir.path(), "v1", first.cert_pem, first.key_pem);

  ServerProcess server(dir.path(), {"--threads", "16"});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  const std::string review = admission_review("rotate", kGpuPod);

  std::atomic<bool> stop{false};
  std::atomic<int> requests{0}, failures{0};
  std::mutex serials_mutex;
  std::set<std::string> serials;
  // The load's progress, observed: a pair has served a handshake, requests have been answered.
  auto served = [&](const std::string& serial) {
    std::lock_guard<std::mutex> lock(serials_mutex);
    return serials.count(serial) == 1;
  };
  auto answered_more = [&](int count) {
    const int until = requests.load() + count;
    return eventually([&] { return requests.load() >= until; });
  };
  std::vector<std::thread> load;
  for (int t = 0; t < 4; ++t) {
    load.emplace_back([&] {
      while (!stop.load()) {
        TlsClient client;  // a new handshake every few requests, as connections churn
        if (!client.connect(server.port(), options).empty()) {
          ++failures;
          continue;
        }
        {
          std::lock_guard<std::mutex> lock(serials_mutex);
          serials.insert(client.peer_serial());
        }
        for (int i = 0; i < 5 && !stop.load(); ++i) {
          auto res = client.request("POST", "/mutate", review);
          ++requests;
          if (!res || res->status != 200) ++failures;
        }
      }
    });
  }
  CHECK(eventually([&] { return served(first_serial); }));
  CHECK(answered_more(20));

  // 1. An atomic ..data swap to a new pair: new handshakes get it.
  publish(dir.path(), "v2", second.cert_pem, second.key_pem);
  CHECK(wait_for_metric(server, R"(gpuadmit_certificate_reloads_total{result="success"})", 1));
  CHECK(eventually([&] { return served(second_serial); }));
  CHECK(answered_more(20));

  // 2. A half-done rotation (new certificate, old key) is refused; the old pair keeps serving.
  publish(dir.path(), "v3", third.cert_pem, second.key_pem);
  CHECK(wait_for_metric(server, R"(gpuadmit_certificate_reloads_total{result="failure"})", 1));
  CHECK(answered_more(20));
  {
    TlsClient probe;
    REQUIRE(probe.connect(server.port(), options).empty());
    CHECK(probe.peer_serial() == serial_of(second));
  }
  // ... until the key arrives.
  replace_file(dir.path() + "/..v3/tls.key", third.key_pem);
  CHECK(wait_for_metric(server, R"(gpuadmit_certificate_reloads_total{result="success"})", 2));
  CHECK(eventually([&] { return served(third_serial); }));
  CHECK(answered_more(20));
  stop.store(true);
  for (auto& t : load) t.join();

  INFO("requests: " << requests.load());
  CHECK(requests.load() > 50);
  CHECK(failures.load() == 0);
  CHECK(serials.count(serial_of(first)) == 1);
  CHECK(serials.count(serial_of(second)) == 1);
  CHECK(serials.count(serial_of(third)) == 1);

  TlsClient after;
  REQUIRE(after.connect(server.port(), options).empty());
  CHECK(after.peer_serial() == serial_of(third));
  const double expiry =
      metric_value(server.metrics(), "gpuadmit_certificate_expiry_timestamp_seconds");
  CHECK(std::abs(expiry - (static_cast<double>(std::time(nullptr)) + 300 * 86400)) < 7200);
  CHECK(server.log().find("\"msg\":\"certificate reloaded\"") != std::string::npos);
}

TEST_CASE("reload: a valid policy replaces the old one, an invalid one is refused") {
  TempDir dir;
  generate_certs(dir.path());
  const std::string original = slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
  REQUIRE(original.find("gpu-batch: {value: 1000,") != std::string::npos);
  std::string changed = original;
  changed.replace(changed.find("gpu-batch: {value: 1000,"), 24, "gpu-batch: {value: 2000,");
  const std::string policy = dir / "policy.yaml";
  write_file(policy, original);
  write_file(dir / "changed.yaml", changed);

  ServerProcess server(dir.path(), {"--policy", policy});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = dir / "ca.crt";
  TlsClient client;
  REQUIRE(client.connect(server.port(), options).empty());
  const std::string review = admission_review("policy", kGpuPod);

  auto answer = [&] {
    auto res = client.request("POST", "/mutate", review);
    REQUIRE(res.has_value());
    REQUIRE(res->status == 200);
    return Json::parse(res->body);
  };
  const Json before = answer();
  CHECK(before == offline(review, policy));

  replace_file(policy, changed);
  REQUIRE(wait_for_metric(server, "gpuadmit_policy_generation", 2));
  const Json after = answer();  // same kept-alive connection: swapped between requests
  CHECK(after == offline(review, dir / "changed.yaml"));
  CHECK(metric_value(server.metrics(), R"(gpuadmit_policy_reloads_total{result="success"})") == 1);

  // Invalid: every error logged, the counter up, the previous policy still answering.
  replace_file(policy, "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nspec:\n  classes: [\n");
  REQUIRE(wait_for_metric(server, R"(gpuadmit_policy_reloads_total{result="failure"})", 1));
  CHECK(answer() == after);
  CHECK(metric_value(server.metrics(), "gpuadmit_policy_generation") == 2);
  const std::string log = server.log();
  CHECK(log.find("\"msg\":\"policy reload failed; the previous policy keeps serving\"") !=
        std::string::npos);
  CHECK(log.find("\"msg\":\"policy error\"") != std::string::npos);

  // A later valid file is picked up again.
  replace_file(policy, original);
  REQUIRE(wait_for_metric(server, "gpuadmit_policy_generation", 3));
  CHECK(answer() == before);
}

namespace {

// What kubelet's atomic writer does for any ConfigMap or Secret volume (pkg/volume/util
// atomic_writer.go): the files in a new timestamped directory, ..data swapped to it by rename,
// and each key a symlink "<key> -> ..data/<key>" made once.
void publish_volume(const std::string& dir, const std::string& version,
                    const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string data_dir = dir + "/.." + version;
  fs::create_directories(data_dir);
  for (const auto& [key, content] : files) write_file(data_dir + "/" + key, content);
  fs::create_directory_symlink(".." + version, dir + "/..data_tmp");
  fs::rename(dir + "/..data_tmp", dir + "/..data");
  for (const auto& [key, content] : files) {
    if (!fs::is_symlink(dir + "/" + key)) fs::create_symlink("..data/" + key, dir + "/" + key);
  }
}

// The value of `--<flag>=` in the chart's Deployment template.
std::string chart_flag(const std::string& flag) {
  const std::string deployment =
      slurp(std::string(GPUADMIT_SOURCE_DIR) + "/charts/gpuadmit/templates/deployment.yaml");
  const std::string prefix = "- --" + flag + "=";
  const auto at = deployment.find(prefix);
  REQUIRE(at != std::string::npos);
  return deployment.substr(at + prefix.size(), deployment.find('\n', at) - at - prefix.size());
}

}  // namespace

// The mounts of charts/gpuadmit (templates/deployment.yaml) reproduced under a temporary root:
// the policy ConfigMap at --policy's directory, key policy.yaml; the TLS Secret at --tls-cert's,
// keys tls.crt and tls.key; both updated by the kubelet's ..data swap, the policy twice, as
// `helm upgrade` with a new policy does. The server reloads without restarting.
TEST_CASE("reload: the chart's ConfigMap and Secret volume layout, updated by ..data swaps") {
  const std::string policy_flag = chart_flag("policy");
  const std::string cert_flag = chart_flag("tls-cert");
  REQUIRE(policy_flag == "/etc/gpuadmit/policy/policy.yaml");
  REQUIRE(cert_flag == "/etc/gpuadmit/tls/tls.crt");
  REQUIRE(chart_flag("tls-key") == "/etc/gpuadmit/tls/tls.key");
  TempDir root;
  const std::string policy_dir = root.path() + "/etc/gpuadmit/policy";
  const std::string tls_dir = root.path() + "/etc/gpuadmit/tls";
  generate_certs(root.path());
  publish_volume(tls_dir, "2026_11_23_10_00_00.000000001",
                 {{"tls.crt", slurp(root / "tls.crt")}, {"tls.key", slurp(root / "tls.key")}});
  const std::string original = slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
  std::string changed = original;
  changed.replace(changed.find("gpu-batch: {value: 1000,"), 24, "gpu-batch: {value: 2000,");
  write_file(root / "changed.yaml", changed);
  publish_volume(policy_dir, "2026_11_23_10_00_00.000000002", {{"policy.yaml", original}});

  ServerProcess server(tls_dir, {"--policy=" + root.path() + policy_flag});
  REQUIRE(server.wait_ready());
  TlsClient::Options options;
  options.ca_path = root / "ca.crt";
  TlsClient client;
  REQUIRE(client.connect(server.port(), options).empty());
  const std::string review = admission_review("chart-layout", kGpuPod);
  auto answer = [&] {
    auto res = client.request("POST", "/mutate", review);
    REQUIRE(res.has_value());
    REQUIRE(res->status == 200);
    return Json::parse(res->body);
  };
  const Json before = answer();
  CHECK(before == offline(review, std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml"));

  publish_volume(policy_dir, "2026_11_23_10_05_00.000000003", {{"policy.yaml", changed}});
  REQUIRE(wait_for_metric(server, "gpuadmit_policy_generation", 2));
  CHECK(answer() == offline(review, root / "changed.yaml"));
  CHECK(answer() != before);
  publish_volume(policy_dir, "2026_11_23_10_10_00.000000004", {{"policy.yaml", original}});
  REQUIRE(wait_for_metric(server, "gpuadmit_policy_generation", 3));
  CHECK(answer() == before);

  // A certificate renewal (cert-manager rewrites the Secret): new connections get the new pair.
  TempDir next;
  generate_certs(next.path());
  publish_volume(tls_dir, "2026_11_23_10_15_00.000000005",
                 {{"tls.crt", slurp(next / "tls.crt")}, {"tls.key", slurp(next / "tls.key")}});
  REQUIRE(wait_for_metric(server, R"(gpuadmit_certificate_reloads_total{result="success"})", 1));
  TlsClient renewed;
  TlsClient::Options next_options;
  next_options.ca_path = next / "ca.crt";
  CHECK(renewed.connect(server.port(), next_options).empty());
  CHECK(server.wait_exit(0) == std::nullopt);  // never restarted
}
namespace {

certs::PemPair api_server_client(const certs::PemPair& ca) {
  certs::LeafProfile profile;
  profile.common_name = "kube-apiserver";
  profile.names = {"kube-apiserver"};
  profile.client_auth = true;
  return std::get<certs::PemPair>(certs::issue_certificate(ca, profile));
}

}  // namespace

// --client-ca is reloaded as the serving pair is: the API server's client CA renewed (a Secret's
// ..data swap) is required of the next connection without a restart; a connection made before
// keeps its verified session; a bundle that cannot be read leaves the previous CAs in force.
TEST_CASE(
    "reload: a rotated --client-ca applies to new connections, an unreadable one is refused") {
  TempDir dir, ca_dir;
  generate_certs(dir.path());
  const certs::PemPair old_ca = std::get<certs::PemPair>(certs::generate_ca("client CA 1", 30));
  const certs::PemPair new_ca = std::get<certs::PemPair>(certs::generate_ca("client CA 2", 30));
  const certs::PemPair old_client = api_server_client(old_ca),
                       new_client = api_server_client(new_ca);
  write_file(dir / "old.crt", old_client.cert_pem);
  write_file(dir / "old.key", old_client.key_pem);
  write_file(dir / "new.crt", new_client.cert_pem);
  write_file(dir / "new.key", new_client.key_pem);
  publish_volume(ca_dir.path(), "v1", {{"ca.crt", old_ca.cert_pem}});

  ServerProcess server(dir.path(), {"--client-ca", ca_dir / "ca.crt"});
  REQUIRE(server.wait_ready());
  const std::string review = admission_review("client-ca", kGpuPod);
  auto with = [&](const std::string& name, int max_tls = 0) {
    TlsClient::Options options;
    options.ca_path = dir / "ca.crt";
    options.client_cert = dir / (name + ".crt");
    options.client_key = dir / (name + ".key");
    if (max_tls != 0) options.max_tls_version = max_tls;
    return options;
  };
  // With TLS 1.3 the server's verdict on the client's certificate may arrive after the client's
  // handshake ends: a refusal is a failed handshake or a failed first request.
  auto accepted = [&](const TlsClient::Options& options) {
    TlsClient client;
    if (!client.connect(server.port(), options).empty()) return false;
    auto res = client.request("POST", "/mutate", review);
    return res.has_value() && res->status == 200;
  };
  CHECK(accepted(with("old")));
  CHECK_FALSE(accepted(with("new")));
  TlsClient kept;  // connected under the old CA
  REQUIRE(kept.connect(server.port(), with("old")).empty());
  REQUIRE(kept.request("POST", "/mutate", review)->status == 200);

  // The renewal: the Secret now holds the new CA only.
  publish_volume(ca_dir.path(), "v2", {{"ca.crt", new_ca.cert_pem}});
  REQUIRE(wait_for_metric(server, R"(gpuadmit_client_ca_reloads_total{result="success"})", 1));
  CHECK(accepted(with("new")));
  CHECK(accepted(with("new", TLS1_2_VERSION)));
  CHECK_FALSE(accepted(with("old")));
  CHECK_FALSE(accepted(with("old", TLS1_2_VERSION)));
  CHECK(kept.request("POST", "/mutate", review)->status == 200);
  // The log is written in batches.
  CHECK(eventually(
      [&] { return server.log().find("\"msg\":\"client CA reloaded\"") != std::string::npos; }));

  // A bundle with no certificate in it: refused, the new CA stays in force.
  publish_volume(ca_dir.path(), "v3", {{"ca.crt", "not a certificate\n"}});
  REQUIRE(wait_for_metric(server, R"(gpuadmit_client_ca_reloads_total{result="failure"})", 1));
  CHECK(accepted(with("new")));
  CHECK_FALSE(accepted(with("old")));
  CHECK(eventually([&] {
    return server.log().find(
               "\"msg\":\"client CA reload failed; the previous client CA stays in force\"") !=
           std::string::npos;
  }));

  // Both CAs (a rotation's overlap): both clients are accepted.
  publish_volume(ca_dir.path(), "v4", {{"ca.crt", old_ca.cert_pem + new_ca.cert_pem}});
  REQUIRE(wait_for_metric(server, R"(gpuadmit_client_ca_reloads_total{result="success"})", 2));
  CHECK(accepted(with("old")));
  CHECK(accepted(with("new")));
  CHECK(server.wait_exit(0) == std::nullopt);  // never restarted
}
}  // namespace reload_test
