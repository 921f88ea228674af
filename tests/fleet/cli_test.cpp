// `gpuadmit fleet` end to end (SPEC §8): the text table, --output json, exit codes 0 / 1 / 2
// with file and line, folders and standard input, --svg rendered by rsvg-convert.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/json.h"
#include "tests/support/process.h"

namespace gpuadmit {
namespace cli_test {
namespace {

namespace fs = std::filesystem;
const std::string kBinary = GPUADMIT_BINARY;

struct TempDir {
  TempDir() {
    char t[] = "/tmp/gpuadmit-fleet-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path + "/" + name;
    fs::create_directories(fs::path(file).parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::string path;
};

constexpr const char* kPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: cli}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      gpusPerNode: 8
      nodes: 2
  tenants:
    - {name: ml, namespaces: ["ml"], defaultClass: a100, quota: {gpus: 8}}
)";

std::string pods(const std::string& name, int replicas, int gpus) {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
         ", namespace: ml}\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n"
         "        resources: {limits: {nvidia.com/gpu: " +
         std::to_string(gpus) + "}}\n";
}

TEST_CASE("fleet cli: every pod placed: the table, exit 0") {
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", kPolicy);
  dir.write("m/a.yaml", pods("train", 2, 4));
  // 2 pods × 4 on node 0: placed 8 of 16, nothing stranded (node 0 is full), 50%.
  auto r = testing::run_command(kBinary + " fleet --policy " + policy + " " + dir.path + "/m");
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "GPU classes:\n"
        "  class  unit  nodes  total  requested  placed  stranded  utilisation  unplaceable pods\n"
        "  a100   gpu   2×8    16     8          8       0         50.0%        0\n"
        "\n"
        "tenants:\n"
        "  tenant  requested GPUs  quota.gpus\n"
        "  ml      8               8\n");
}

TEST_CASE("fleet cli: unplaceable pods: exit 1, listed with file:line and reason, and as JSON") {
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", kPolicy);
  // 3 pods × 5 on 2 × 8: two placed (one per node, 3 free each), the third "class full";
  // the smallest left-over pod is 5: 3 + 3 = 6 stranded.
  const std::string file = dir.write("a.yaml", "# a comment\n" + pods("five", 3, 5));
  auto r = testing::run_command(kBinary + " fleet --policy " + policy + " " + file);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("  a100   gpu   2×8    16     15         10      6         62.5%        1\n") !=
        std::string::npos);
  CHECK(r.out.find("unplaceable pods (1):\n  " + file +
                   ":2: ml/five (Deployment) spec.template.spec: 1 pod of 5 GPUs on a100: class "
                   "full\n") != std::string::npos);
  CHECK(r.out.find("  ml      15              8           over quota\n") != std::string::npos);
  // No suggestion: the 15 GPUs in total are no multiple of 4 or 8 (the divisors of 8 nearest 5).
  CHECK(r.out.find("workloads that strand most:\n  " + file +
                   ":2: ml/five (Deployment) spec.template.spec: 3 × 5 GPUs on 8-GPU nodes of "
                   "a100 strand 6\n") != std::string::npos);
  auto j = testing::run_command(kBinary + " fleet --output json --policy " + policy + " " + file);
  CHECK(j.exit_code == 1);
  const Json report = Json::parse(j.out);
  CHECK(report["classes"][0] == Json::parse(R"({"name": "a100", "unit": "gpu", "nodes": 2,
      "gpusPerNode": 8, "unitsPerGPU": 1, "total": 16, "requested": 15, "placed": 10,
      "stranded": 6, "free": 6, "utilisation": 0.625, "placedPods": 2, "unplaceablePods": 1})"));
  CHECK(report["unplaceable"][0]["reason"] == "class full");
  CHECK(report["unplaceable"][0]["line"] == 2);
  CHECK(report["unplaceable"][0]["pods"] == 1);
  CHECK(report["tenants"][0] ==
        Json::parse(R"({"name": "ml", "requestedGPUs": 15, "quotaGPUs": 8})"));
  CHECK(report["fragmenters"][0]["stranded"] == 6);
  CHECK(report["summary"]["unplaceablePods"] == 1);
}

TEST_CASE("fleet cli: bad input: exit 2 with the file and line, no report") {
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", kPolicy);
  const std::string file = dir.write("bad.yaml", pods("ok", 1, 1) + "---\nkind: Pod\n  bad: [\n");
  auto r = testing::run_command(kBinary + " fleet --policy " + policy + " " + file);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err.rfind(file + ":14: cannot read this document: ", 0) == 0);
  CHECK(r.err.find("gpuadmit fleet: 1 input error; fix the manifests above") != std::string::npos);
  auto missing =
      testing::run_command(kBinary + " fleet --policy " + policy + " " + dir.path + "/nope");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.rfind(dir.path + "/nope: no such file or folder; check the path\n", 0) == 0);
  auto usage = testing::run_command(kBinary + " fleet --policy " + policy);
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.rfind("gpuadmit fleet: no manifests given", 0) == 0);
  auto output = testing::run_command(kBinary + " fleet --output sarif " + file);
  CHECK(output.exit_code == 2);
  CHECK(output.err.rfind("gpuadmit fleet: --output must be text or json, not \"sarif\"\n", 0) == 0);
}

TEST_CASE("fleet cli: standard input") {
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", kPolicy);
  auto r = testing::run_command(kBinary + " fleet --output json --policy " + policy + " -",
                                pods("a", 1, 8) + "---\n" + pods("b", 1, 8));
  CHECK(r.exit_code == 0);
  CHECK(Json::parse(r.out)["classes"][0]["placed"] == 16);
}

}  // namespace
}  // namespace cli_test
}  // namespace gpuadmit
