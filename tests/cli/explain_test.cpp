// --explain: review (standard error, the AdmissionReview on standard output unchanged) and lint
// (text: a because: line; JSON: policyPath) name the policy field behind each mutation and
// finding, exactly.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "tests/support/process.h"

namespace gpuadmit {
namespace explain_test {
namespace {

const std::string kBinary = GPUADMIT_BINARY;
const std::string kOnprem = std::string(GPUADMIT_SOURCE_DIR) + "/policies/examples/onprem-mig.yaml";
const std::string kRollout =
    std::string(GPUADMIT_SOURCE_DIR) + "/tests/policytest/suites/rollout-policy.yaml";

std::string review(const std::string& ns, const std::string& gpus) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",)"
         R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":")" +
         ns +
         R"(","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)"
         R"({"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":")" +
         gpus + R"("}}}]}}}})";
}

TEST_CASE("explain: review --explain names the policy field of each mutation and finding") {
  const std::string command = kBinary + " review --policy " + kOnprem;
  auto plain = testing::run_command(command, review("research-x", "6"));
  auto explained = testing::run_command(command + " --explain", review("research-x", "6"));
  REQUIRE(explained.exit_code == 0);
  CHECK(explained.out == plain.out);  // the AdmissionReview is unchanged
  CHECK(plain.err.empty());
  CHECK(explained.err ==
        "mutation requests-equal-limits: spec.enforcement.requestsEqualLimits = \"fix\"\n"
        "mutation class: spec.tenants[research].defaultClass = \"h100\"\n"
        "mutation tolerations: spec.classes.h100.taints[0] = "
        "{\"key\":\"nvidia.com/gpu\",\"effect\":\"NoSchedule\"}\n"
        "mutation tolerations: spec.classes.h100.taints[1] = "
        "{\"key\":\"gpu.example.com/pool\",\"value\":\"h100\",\"effect\":\"NoSchedule\"}\n"
        "mutation node-affinity: spec.classes.h100.nodeSelector[nvidia.com/gpu.product] = "
        "[\"NVIDIA-H100-80GB-HBM3\"]\n"
        "mutation defaults: spec.tenants[research].defaults.perGPU.cpu = \"16\"\n"
        "mutation defaults: spec.tenants[research].defaults.perGPU.memory = \"200Gi\"\n"
        "mutation priority: spec.tenants[research].priority.default = \"gpu-batch\"\n"
        "GPU014 warn: spec.enforcement.fragmentation = \"warn\"\n");

  // Denied: no mutation is applied, so none is explained.
  explained = testing::run_command(command + " --explain", review("research-x", "9"));
  CHECK(explained.err ==
        "GPU005 deny: spec.tenants[research].limits.maxGPUsPerContainer = 8\n"
        "GPU006 deny: spec.classes.h100.gpusPerNode = 8\n");

  // The rule's own field is named; a tenant's rule override when the rule names none; a finding
  // a tenant in audit mode turned into a warning reads "audit".
  explained = testing::run_command(kBinary + " review --explain --policy " + kRollout,
                                   review("trial", "6"));
  CHECK(explained.err.substr(explained.err.find("GPU")) ==
        "GPU005 audit: spec.tenants[trial].limits.maxGPUsPerPod = 4\n"
        "GPU014 warn: spec.enforcement.fragmentation = \"warn\"\n");
  explained = testing::run_command(kBinary + " review --explain --policy " + kRollout,
                                   review("early", "6"));
  CHECK(explained.err == "GPU014 deny: spec.tenants[early].enforcement.rules.GPU014 = \"deny\"\n");
}

TEST_CASE("explain: lint --explain adds a because: line, and policyPath to JSON") {
  char dir_template[] = "/tmp/gpuadmit-explain-XXXXXX";
  const std::string file = std::string(mkdtemp(dir_template)) + "/pod.yaml";
  std::ofstream(file) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: research-x}\n"
                         "spec:\n  containers:\n    - {name: c, image: i, resources: {limits: "
                         "{nvidia.com/gpu: \"9\"}}}\n";
  auto r =
      testing::run_command(kBinary + " lint --no-color --explain --policy " + kOnprem + " " + file);
  CHECK(r.exit_code == 1);
  CHECK(r.out == file +
                     "\n  6:  deny   GPU005  Pod research-x/p: container c: 9 GPUs (nvidia.com/gpu "
                     "9) exceed maxGPUsPerContainer 8 of tenant research; request at most 8 per "
                     "container [spec.containers[0].resources]\n"
                     "      because: spec.tenants[research].limits.maxGPUsPerContainer = 8\n"
                     "  6:  deny   GPU006  Pod research-x/p: container c: nvidia.com/gpu 9 cannot "
                     "fit on one node of class h100 (8 GPUs per node); request at most 8, or "
                     "split the work across pods "
                     "[spec.containers[0].resources.requests[\"nvidia.com/gpu\"]]\n"
                     "      because: spec.classes.h100.gpusPerNode = 8\n\n"
                     "2 deny, 0 warn, 0 errors in 1 document (1 workload) from 1 file\n");
  // Without --explain, no because: line and no policyPath.
  r = testing::run_command(kBinary + " lint --no-color --policy " + kOnprem + " " + file);
  CHECK(r.out.find("because:") == std::string::npos);
  r = testing::run_command(kBinary + " lint --output json --policy " + kOnprem + " " + file);
  CHECK(r.out.find("policyPath") == std::string::npos);
  r = testing::run_command(kBinary + " lint --output json --explain --policy " + kOnprem + " " +
                           file);
  CHECK(
      r.out.find(
          R"("documentLine":1,"policyPath":"spec.tenants[research].limits.maxGPUsPerContainer"})") !=
      std::string::npos);
  CHECK(r.out.find(R"("documentLine":1,"policyPath":"spec.classes.h100.gpusPerNode"})") !=
        std::string::npos);
  std::remove(file.c_str());
}

}  // namespace
}  // namespace explain_test
}  // namespace gpuadmit
