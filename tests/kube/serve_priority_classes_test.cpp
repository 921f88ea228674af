// `gpuadmit serve --cluster-priority-classes` against a simulated API server: /readyz fails until
// the cluster's PriorityClasses are listed, a GPU pod then gets the class's value and
// preemptionPolicy as the cluster has them (what the Priority admission plugin will compute, so
// it cannot refuse the pod), the cluster's globalDefault class counts as unset, and the policy's
// disagreement with the cluster is logged and counted.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "engine/admission.h"
#include "engine/json.h"
#include "tests/kube/fake_scheduling.h"

namespace serve_priority_classes_test {

using namespace gpuadmit::testing;
using gpuadmit::Json;

namespace {

// The decoded JSON Patch of a /mutate answer.
Json patch_of(const HttpResponse& res) {
  const Json review = Json::parse(res.body);
  const std::string b64 = review["response"].value("patch", "");
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int bits = 0;
  unsigned value = 0;  // only its low bits matter: unsigned wraps where int would overflow
  for (const char c : b64) {
    if (c == '=') break;
    value = value * 64 + static_cast<unsigned>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xff);
    }
  }
  return Json::parse(out);
}

// The operations of `patch` that touch the pod spec's priority fields, as "op path value".
std::vector<std::string> priority_ops(const Json& patch) {
  std::vector<std::string> out;
  for (const Json& op : patch) {
    const std::string path = op["path"];
    if (path.find("riority") == std::string::npos && path != "/spec/preemptionPolicy") continue;
    out.push_back(op["op"].get<std::string>() + " " + path + " " + op["value"].dump());
  }
  return out;
}

template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace

TEST_CASE(
    "serve --cluster-priority-classes: ready once listed, then pods get the cluster's classes") {
  TempDir webhook_dir, account;
  generate_certs(webhook_dir.path());
  FakeScheduling api(account.path());  // its CA is the service account's ca.crt
  std::ofstream(account / "token") << "sa-token\n";
  api.refuse_lists(503, "");
  // The embedded default policy declares gpu-batch at 1000, Never; this cluster recreated it at
  // 1500 and has a globalDefault class of its own.
  api.set_list({priority_class("gpu-batch", 1500), priority_class("gpu-training", 10000),
                priority_class("gpu-inference", 100000), priority_class("standard", 0, true)},
               "42");
  ServerProcess server(webhook_dir.path(), {"--cluster-priority-classes"}, "",
                       {{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
                        {"KUBERNETES_SERVICE_PORT", std::to_string(api.port())},
                        {"GPUADMIT_SERVICE_ACCOUNT_DIR", account.path()}});
  REQUIRE(server.wait_ready());
  CHECK(server.log().find("\"cluster_priority_classes\":true") != std::string::npos);
  CHECK(plain_get(server.metrics_port(), "/readyz") ==
        "the cluster's PriorityClasses are not listed yet\n");

  api.refuse_lists(200, "");
  REQUIRE(eventually([&] { return plain_get(server.metrics_port(), "/readyz") == "ok\n"; }));

  TlsClient::Options options;
  options.ca_path = webhook_dir / "ca.crt";
  TlsClient client;
  REQUIRE(client.connect(server.port(), options).empty());
  auto res = client.request("POST", "/mutate", admission_review("p-1", kGpuPod));
  REQUIRE(res.has_value());
  REQUIRE(res->status == 200);
  CHECK(priority_ops(patch_of(*res)) ==
        std::vector<std::string>{"add /spec/priorityClassName \"gpu-batch\"",
                                 "add /spec/priority 1500",
                                 "add /spec/preemptionPolicy \"PreemptLowerPriority\""});

  // What the Priority plugin's first pass leaves on a pod that named no class: the cluster's
  // globalDefault class and its value. It counts as unset.
  Json pod = Json::parse(kGpuPod);
  pod["spec"]["priorityClassName"] = "standard";
  pod["spec"]["priority"] = 0;
  pod["spec"]["preemptionPolicy"] = "PreemptLowerPriority";
  res = client.request("POST", "/mutate", admission_review("p-2", pod.dump()));
  REQUIRE(res.has_value());
  CHECK(priority_ops(patch_of(*res)) ==
        std::vector<std::string>{"replace /spec/priorityClassName \"gpu-batch\"",
                                 "replace /spec/priority 1500"});

  REQUIRE(eventually([&] {
    return metric_value(server.metrics(), "gpuadmit_priority_class_disagreements") == 3;
  }));
  const std::string log = server.log();
  CHECK(log.find("\"msg\":\"the policy's priorityClasses disagree with the cluster's; pods get "
                 "the cluster's\"") != std::string::npos);
  CHECK(log.find("PriorityClass gpu-batch: the policy declares value 1000, the cluster has 1500; "
                 "pods get the cluster's") != std::string::npos);
  CHECK(log.find("globalDefault: the policy declares none, the cluster's is standard; the "
                 "cluster's counts as unset") != std::string::npos);
  CHECK(metric_value(server.metrics(), "gpuadmit_priority_classes_synced") == 1);
  // Only list and watch, with the service account's token.
  for (const std::string& r : api.requests()) {
    CHECK(r.rfind(kPriorityClassesPath, 0) == 0);
  }
}

TEST_CASE("serve --cluster-priority-classes: needs the in-cluster service environment") {
  TempDir dir;
  generate_certs(dir.path());
  auto r = run_command("env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT " +
                       std::string(GPUADMIT_BINARY) + " serve --tls-cert " + (dir / "tls.crt") +
                       " --tls-key " + (dir / "tls.key") +
                       " --listen 127.0.0.1:0 --metrics-listen off --cluster-priority-classes");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--cluster-priority-classes: KUBERNETES_SERVICE_HOST and "
                   "KUBERNETES_SERVICE_PORT are not set: not running in a pod") !=
        std::string::npos);
}
}  // namespace serve_priority_classes_test
