// `gpuadmit fleet --live` end to end: exports on standard input and in files (YAML, JSON), the
// three outputs and the picture, exit codes, and the errors a user meets — usage, input,
// nothing to report on, no cluster to ask. The API itself is tests/kube/fleet_api_test.cpp's.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/json.h"
#include "tests/fleet/live_test_util.h"
#include "tests/support/process.h"

namespace gpuadmit {
namespace live_cli_test {
namespace {

namespace fs = std::filesystem;
const std::string kBinary = GPUADMIT_BINARY;
const std::string kPolicy = fleet::testing::kData + "live-policy.yaml";

struct TempDir {
  TempDir() {
    char t[] = "/tmp/gpuadmit-live-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name, std::ios::binary) << text;
    return path + "/" + name;
  }
  std::string path;
};

TEST_CASE("fleet live cli: kubectl's YAML on standard input, the text report, exit 0") {
  const auto r = testing::run_command(kBinary + " fleet --live --policy " + kPolicy + " -",
                                      fleet::testing::live_fleet_yaml());
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);  // pending pods do not fail a live report: it is a measurement
  CHECK(r.out.rfind("live fleet: 13 nodes, 12 with GPUs; 23 GPU pods running, 7 pending\n", 0) ==
        0);
  CHECK(r.out.find("  a100: 8 GPUs stranded on 3 nodes; repacked, 1 stranded and 1 node empty "
                   "(0 now)\n") != std::string::npos);
}

TEST_CASE("fleet live cli: a JSON export from a file, as JSON, Prometheus, and a picture") {
  TempDir dir;
  const std::string file =
      dir.write("export.json", fleet::testing::as_json_list(fleet::testing::live_fleet_yaml()));
  const auto json = testing::run_command(kBinary + " fleet --live --output json --policy " +
                                         kPolicy + " " + file);
  REQUIRE(json.exit_code == 0);
  const Json report = Json::parse(json.out);
  CHECK(report["classes"][0]["stranded"] == 8);
  CHECK(report["classes"][0]["repack"]["emptyNodes"] == 1);
  const auto prom = testing::run_command(kBinary + " fleet --live --output prometheus --policy " +
                                         kPolicy + " --svg " + dir.path + "/fleet.svg " + file);
  CHECK(prom.err == "");
  REQUIRE(prom.exit_code == 0);
  CHECK(prom.out.find("gpuadmit_fleet_gpus_stranded{class=\"a100\",unit=\"gpu\"} 8\n") !=
        std::string::npos);
  CHECK(testing::slurp(dir.path + "/fleet.svg").find("<rect class=\"gpu ") != std::string::npos);
}

TEST_CASE("fleet live cli: input errors name the file and line, and no report is printed") {
  TempDir dir;
  const std::string broken = dir.write(
      "broken.json", "{\"items\": [\n  {\"kind\": \"Node\"},\n  {\"kind\": \"Pod\",,}\n]}\n");
  const auto r = testing::run_command(kBinary + " fleet --live --policy " + kPolicy + " " + broken);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err == broken +
                     ":3: cannot read the JSON: invalid JSON: expected a member name\n"
                     "gpuadmit fleet: 1 input error; fix the input above (no report is made "
                     "from part of the fleet)\n");
  // Pods alone: nothing to measure them against.
  const auto pods = testing::run_command(
      kBinary + " fleet --live --policy " + kPolicy + " -",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers: []\n");
  CHECK(pods.exit_code == 2);
  CHECK(pods.err ==
        "gpuadmit fleet: the input holds no Node; export nodes and pods together "
        "(kubectl get nodes,pods -A -o json)\n");
}

TEST_CASE("fleet live cli: usage errors") {
  struct Case {
    std::string args;
    std::string error;
  };
  const Case cases[] = {
      {"--output prometheus x.yaml",
       "--output must be text or json, not \"prometheus\" (prometheus needs --live)"},
      {"--live --output sarif -", "--output must be text or json or prometheus, not \"sarif\""},
      {"--kubeconfig k x.yaml", "--kubeconfig needs --live"},
      {"--live --context c x.yaml", "--context reads from the API; it takes no PATH"},
      {"--live --namespace ml -", "--namespace does not apply to --live"},
      {"--live --timeout 0", "--timeout must be a number of seconds above 0, not \"0\""},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    // No cluster is reachable here: HOME has no .kube/config, KUBECONFIG and the service
    // environment are unset, so nothing below may depend on one.
    const auto r =
        testing::run_command("env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST HOME=/nonexistent " +
                             kBinary + " fleet --policy " + kPolicy + " " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("gpuadmit fleet: " + c.error + "\nusage: gpuadmit fleet", 0) == 0);
  }
}

TEST_CASE("fleet live cli: without an export, no kubeconfig and no cluster: a clear error") {
  const auto r = testing::run_command(
      "env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT HOME=/nonexistent " +
      kBinary + " fleet --live --policy " + kPolicy);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        "gpuadmit fleet: no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and "
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a pod\n");
}

TEST_CASE("fleet live cli: --help names the live mode") {
  const auto r = testing::run_command(kBinary + " fleet --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("gpuadmit fleet --live [--policy P] [--output text|json|prometheus]") !=
        std::string::npos);
}

}  // namespace
}  // namespace live_cli_test
}  // namespace gpuadmit
