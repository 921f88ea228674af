// `gpuadmit policy check` end to end: every shipped policy passes, a broken policy prints every
// error with file:line:column and exits 2 (SPEC §8).

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace gpuadmit {
namespace policy_check_test {
namespace {

namespace fs = std::filesystem;
const std::string kBinary = GPUADMIT_BINARY;

TEST_CASE("policy check: every shipped policy and example passes") {
  const fs::path root = GPUADMIT_SOURCE_DIR;
  std::vector<fs::path> files = {root / "policies" / "default.yaml"};
  for (const auto& entry : fs::directory_iterator(root / "policies" / "examples")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  // default, GKE, AKS, EKS/Karpenter, on-prem MIG + time-slicing.
  REQUIRE(files.size() == 5);
  for (const fs::path& file : files) {
    INFO(file.string());
    auto r = testing::run_command(kBinary + " policy check " + file.string());
    CHECK(r.err == "");
    CHECK(r.out == file.string() + ": ok\n");
    CHECK(r.exit_code == 0);
  }
}

// Errors of several kinds in one file: all are printed, in file order, each with its field path
// and file:line:column; the exit code is 2.
constexpr const char* kBrokenPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: broken
spec:
  classes:
    a100:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]
      gpusPerNode: -8
      mig:
        strategy: mixed
        profiles: [1g.10gb, 4g.20gb]
  priorityClasses:
    gpu-batch: {value: 1000, preemptionPolicy: Sometimes}
  tenants:
    - name: ml
      namespaces: ["ml-(.*"]
      allowedClasses: [a100, h200]
      colour: blue
)YAML";

TEST_CASE("policy check: a broken policy prints every error and exits 2") {
  char dir_template[] = "/tmp/gpuadmit-policy-check-XXXXXX";
  const fs::path dir = mkdtemp(dir_template);
  const fs::path file = dir / "policy.yaml";
  {
    std::ofstream out(file);
    out << kBrokenPolicy;
  }
  const std::string f = file.string();
  auto r = testing::run_command(kBinary + " policy check " + f);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(
      r.err ==
      "spec.classes.a100.gpusPerNode: must not be negative, got -8 (" + f +
          ":10:20)\n"
          "spec.classes.a100.mig.profiles[1]: MIG profile \"4g.20gb\" cannot be made by "
          "NVIDIA-A100-SXM4-80GB (valid: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, "
          "7g.80gb) (" +
          f +
          ":13:29)\n"
          "spec.priorityClasses.gpu-batch.preemptionPolicy: invalid value \"Sometimes\": must be "
          "one of PreemptLowerPriority, Never (" +
          f +
          ":15:48)\n"
          "spec.tenants[0].namespaces[0]: invalid regular expression \"ml-(.*\": missing ): ml-(.* "
          "(" +
          f +
          ":18:20)\n"
          "spec.tenants[0].allowedClasses[1]: unknown class \"h200\" (" +
          f +
          ":19:30)\n"
          "spec.tenants[0].colour: unknown field \"colour\" (" +
          f + ":20:7)\n");
  // Standard input is named <stdin>; a good and a bad file together still exit 2.
  auto piped = testing::run_command(kBinary + " policy check -", kBrokenPolicy);
  CHECK(piped.exit_code == 2);
  CHECK(piped.err.find("(<stdin>:10:20)") != std::string::npos);
  const std::string good = std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml";
  auto both = testing::run_command(kBinary + " policy check " + good + " " + f);
  CHECK(both.exit_code == 2);
  CHECK(both.out == good + ": ok\n");
  CHECK(both.err == r.err);
  fs::remove_all(dir);
}

TEST_CASE("policy check: a missing file and usage errors exit 2") {
  auto missing = testing::run_command(kBinary + " policy check /nonexistent/p.yaml");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out == "");
  CHECK(missing.err ==
        "cannot read the policy file: No such file or directory (/nonexistent/p.yaml)\n");
  auto no_file = testing::run_command(kBinary + " policy check");
  CHECK(no_file.exit_code == 2);
  CHECK(no_file.err ==
        "gpuadmit policy: missing the policy file to check\n"
        "usage: gpuadmit policy check POLICY.yaml...   (\"-\" reads standard input)\n");
  auto unknown = testing::run_command(kBinary + " policy lint x.yaml");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err ==
        "gpuadmit policy: unknown subcommand \"lint\"\n"
        "usage: gpuadmit policy check POLICY.yaml...   (\"-\" reads standard input)\n");
}

}  // namespace
}  // namespace policy_check_test
}  // namespace gpuadmit
