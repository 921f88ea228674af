// `gpuadmit fleet --live`'s tenants (fleet/live_tenants.h) on a small hand-computed fleet:
// tenant ml (quota.gpus 16, namespaces ml-a and ml-b), tenant web (quota 4, no pod), and a
// namespace of no tenant. ml-a runs 8 + 8 + 6 = 22 GPUs with 4 pending: it holds 26 of 16 (the
// ResourceQuota charges a pod at creation, pending or not); ml-b runs one pod of 2 MIG
// instances (2 GPUs as GPU013 counts them); scratch has 1 pending GPU (of a100, the only
// class: a GPU pod naming none gets it, as in the webhook).

#include <catch2/catch.hpp>

#include <sstream>

#include "fleet/cost.h"
#include "fleet/live_output.h"
#include "tests/fleet/live_test_util.h"

namespace gpuadmit::fleet {
namespace live_tenants_test {
namespace {

constexpr std::string_view kPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: tenants}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      gpusPerNode: 8
  tenants:
    - name: ml
      namespaces: ["ml-.*"]
      quota: {gpus: 16}
    - name: web
      namespaces: ["web"]
      quota: {gpus: 4}
)";

std::string node(const std::string& name) {
  return "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: " + name +
         "\n    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
         "  status:\n    allocatable: {nvidia.com/gpu: '8'}\n"
         "    conditions: [{type: Ready, status: 'True'}]\n";
}

std::string pod(const std::string& ns, const std::string& name, const std::string& node_name,
                const std::string& resource, int gpus) {
  const std::string n = std::to_string(gpus);
  return "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " + name + ", namespace: " + ns +
         "}\n  spec:\n" + (node_name.empty() ? "" : "    nodeName: " + node_name + "\n") +
         "    containers:\n    - name: main\n      resources:\n        limits: {" + resource +
         ": '" + n + "'}\n        requests: {" + resource + ": '" + n +
         "'}\n  status:\n    phase: " + (node_name.empty() ? "Pending" : "Running") + "\n";
}

std::string fleet() {
  return "apiVersion: v1\nkind: List\nitems:\n" + node("a100-1") + node("a100-2") + node("a100-3") +
         pod("ml-a", "big-0", "a100-1", "nvidia.com/gpu", 8) +
         pod("ml-a", "big-1", "a100-2", "nvidia.com/gpu", 8) +
         pod("ml-a", "mid-0", "a100-3", "nvidia.com/gpu", 6) +
         pod("ml-a", "wait-0", "", "nvidia.com/gpu", 4) +
         pod("ml-b", "mig-0", "a100-3", "nvidia.com/mig-1g.10gb", 2) +
         pod("scratch", "stray-0", "", "nvidia.com/gpu", 1);
}

}  // namespace

TEST_CASE("fleet live tenants: each namespace's GPUs against its tenant's quota") {
  const testing::LiveRun r = testing::run_live(fleet(), testing::live_policy(kPolicy));
  REQUIRE(r.errors.empty());
  const std::vector<LiveTenantReport>& t = r.report.tenants;
  REQUIRE(t.size() == 3);
  CHECK(t[0].name == "ml");
  CHECK(t[0].quota == 16);
  CHECK(t[0].running == 24);
  CHECK(t[0].pending == 4);
  REQUIRE(t[0].namespaces.size() == 2);
  CHECK(t[0].namespaces[0].ns == "ml-a");
  CHECK(t[0].namespaces[0].running == 22);
  CHECK(t[0].namespaces[0].pending == 4);
  CHECK(t[0].namespaces[0].running_pods == 3);
  CHECK(t[0].namespaces[0].pending_pods == 1);
  CHECK(t[0].namespaces[1].ns == "ml-b");
  CHECK(t[0].namespaces[1].held() == 2);
  CHECK(t[0].over_quota == std::vector<size_t>{0});
  REQUIRE(t[0].classes.size() == 1);  // every pod of ml resolves to a100
  CHECK(t[0].classes[0].cls == 0);
  CHECK(t[0].classes[0].running == 24);
  CHECK(t[0].classes[0].pending == 4);
  CHECK(t[1].name == "web");
  CHECK(t[1].namespaces.empty());
  CHECK(t[1].running + t[1].pending == 0);
  CHECK(t[2].name.empty());  // scratch: no tenant
  CHECK_FALSE(t[2].quota.has_value());
  REQUIRE(t[2].namespaces.size() == 1);
  CHECK(t[2].namespaces[0].pending == 1);
}

TEST_CASE("fleet live tenants: text, JSON and Prometheus") {
  const testing::LiveRun r = testing::run_live(fleet(), testing::live_policy(kPolicy));
  std::ostringstream text;
  write_live_text(r.report, r.input, text);
  CHECK(
      text.str().find("tenants (GPUs; quota.gpus is each namespace's):\n"
                      "  tenant       namespaces  running  pending  quota  namespaces over quota\n"
                      "  ml           2           24       4        16     1\n"
                      "  (no tenant)  1           0        1        -      0\n"
                      "\n"
                      "namespaces over their GPU quota (1):\n"
                      "  ml-a (ml): holds 26 GPUs (22 running + 4 pending), quota 16, 10 over\n") !=
      std::string::npos);

  const Json json = live_to_json(r.report, r.input);
  CHECK(json["tenants"][0] ==
        Json::parse(R"({"name": "ml", "quota": 16, "running": 24, "pending": 4,
          "namespacesOverQuota": 1, "costPerHour": null,
          "namespaces": [
            {"name": "ml-a", "running": 22, "pending": 4, "runningPods": 3, "pendingPods": 1,
             "claimPods": 0, "overQuota": true},
            {"name": "ml-b", "running": 2, "pending": 0, "runningPods": 1, "pendingPods": 0,
             "claimPods": 0, "overQuota": false}],
          "classes": [{"class": "a100", "running": 24, "pending": 4}]})"));
  CHECK(json["tenants"][1]["namespaces"] == Json::array());
  CHECK(json["tenants"][2]["name"].is_null());
  CHECK(json["tenants"][2]["classes"] ==
        Json::parse(R"([{"class": "a100", "running": 0, "pending": 1}])"));

  std::ostringstream prom;
  write_live_prometheus(r.report, prom);
  for (const char* line : {"gpuadmit_fleet_tenant_gpus{tenant=\"ml\",state=\"running\"} 24\n",
                           "gpuadmit_fleet_tenant_gpus{tenant=\"ml\",state=\"pending\"} 4\n",
                           "gpuadmit_fleet_tenant_gpus{tenant=\"web\",state=\"running\"} 0\n",
                           "gpuadmit_fleet_tenant_gpus{tenant=\"\",state=\"pending\"} 1\n",
                           "gpuadmit_fleet_tenant_class_gpus{tenant=\"ml\",class=\"a100\","
                           "state=\"running\"} 24\n",
                           "gpuadmit_fleet_namespace_gpus{tenant=\"ml\",namespace=\"ml-a\"} 26\n",
                           "gpuadmit_fleet_namespace_gpu_quota{tenant=\"ml\",namespace=\"ml-a\"} "
                           "16\n"}) {
    CHECK(prom.str().find(line) != std::string::npos);
  }
  CHECK(prom.str().find("gpuadmit_fleet_namespace_gpu_quota{tenant=\"\"") == std::string::npos);
}

TEST_CASE("fleet cost: exact millionths, rounded half up, printed with 2 to 6 decimals") {
  CHECK(cost_micros(8, 1, 3'670'000) == 29'360'000);
  CHECK(cost_micros(1, 7, 3'670'000) == 524'286);  // a 1g MIG slice: 3.67 / 7 = 0.5242857…
  CHECK(cost_micros(3, 4, 1) == 1);                // 0.75 rounds up
  CHECK(cost_micros(1, 4, 1) == 0);                // 0.25 rounds down
  CHECK(cost_micros(10'000'000, 1, 1'000'000'000'000'000) == INT64_MAX);
  CHECK(cost_micros(0, 1, 5) == 0);
  CHECK(money(0) == "0.00");
  CHECK(money(800'000) == "0.80");
  CHECK(money(12'000'000) == "12.00");
  CHECK(money(29'360'000) == "29.36");
  CHECK(money(524'286) == "0.524286");
  CHECK(money(1) == "0.000001");
}

TEST_CASE("fleet live cost: each priced class's GPUs per hour, and each tenant's") {
  // The fleet above and an empty fourth node; a100 at 3.67 USD per GPU-hour. Running: 8 + 8 +
  // 6 + 2 MIG instances (units of a whole-GPU class: 1 each) = 24 GPUs = 88.08; idle: a100-4's
  // 8 = 29.36; nothing stranded (a free GPU nobody can use is an empty node's, not stranded).
  std::string policy(kPolicy);
  policy.replace(policy.find("      gpusPerNode: 8\n"), 21,
                 "      gpusPerNode: 8\n      price: {perGPUHour: 3.67, currency: USD}\n");
  const testing::LiveRun r =
      testing::run_live(fleet() + node("a100-4"), testing::live_policy(policy));
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.classes[0].cost.has_value());
  CHECK(r.report.currency == "USD");
  CHECK(r.report.classes[0].cost->used == 88'080'000);
  CHECK(r.report.classes[0].cost->idle == 29'360'000);
  CHECK(r.report.classes[0].cost->stranded == 0);
  CHECK(r.report.tenants[0].cost_micros == 88'080'000);  // ml runs every pod that runs
  CHECK(r.report.tenants[2].cost_micros == 0);           // scratch's pod waits

  std::ostringstream text;
  write_live_text(r.report, r.input, text);
  CHECK(text.str().find("cost per hour (USD):\n"
                        "  class  allocated  idle   stranded\n"
                        "  a100   88.08      29.36  0.00\n"
                        "\n"
                        "  tenant  allocated\n"
                        "  ml      88.08\n") != std::string::npos);
  const Json json = live_to_json(r.report, r.input);
  CHECK(json["currency"] == "USD");
  CHECK(json["classes"][0]["cost"] ==
        Json::parse(R"({"perGPUHour": 3.67, "used": 88.08, "idle": 29.36, "stranded": 0.0})"));
  CHECK(json["tenants"][0]["costPerHour"] == Json::parse("88.08"));
  std::ostringstream prom;
  write_live_prometheus(r.report, prom);
  for (const char* line :
       {"gpuadmit_fleet_cost_per_hour{class=\"a100\",currency=\"USD\",state=\"used\"} 88.08\n",
        "gpuadmit_fleet_cost_per_hour{class=\"a100\",currency=\"USD\",state=\"idle\"} 29.36\n",
        "gpuadmit_fleet_tenant_cost_per_hour{tenant=\"ml\",currency=\"USD\"} 88.08\n",
        "gpuadmit_fleet_tenant_cost_per_hour{tenant=\"web\",currency=\"USD\"} 0.00\n"}) {
    CHECK(prom.str().find(line) != std::string::npos);
  }
}

TEST_CASE("fleet live cost: no price, no cost anywhere") {
  const testing::LiveRun r = testing::run_live(fleet(), testing::live_policy(kPolicy));
  std::ostringstream text, prom;
  write_live_text(r.report, r.input, text);
  write_live_prometheus(r.report, prom);
  CHECK(text.str().find("cost per hour") == std::string::npos);
  CHECK(prom.str().find("cost_per_hour") == std::string::npos);
  const Json json = live_to_json(r.report, r.input);
  CHECK(json["currency"].is_null());
  CHECK(json["classes"][0]["cost"].is_null());
  CHECK(json["tenants"][0]["costPerHour"].is_null());
}

}  // namespace live_tenants_test
}  // namespace gpuadmit::fleet
