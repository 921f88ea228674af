// A class's driver and the platform's CUDA image patterns (GPU027, docs/decisions-policy.md "A
// class's driver"): read as written, and every error `policy check` reports, with its location.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/loader.h"
#include "tests/support/policy_errors.h"

namespace gpuadmit {
namespace cuda_policy_test {

using testing::policy_errors;
using testing::replaced;
using Errors = testing::PolicyErrors;
namespace {

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: drivers
spec:
  cudaImages:
    - {pattern: "registry.corp/ml/*-cu12.4*", cuda: "12.4"}
  classes:
    a100:
      driver: {version: "535.104.05"}
    h100:
      driver: {cuda: "12.8"}
    t4: {}
)YAML";

}  // namespace

TEST_CASE("policy: class drivers and CUDA image patterns are read as written", "[policy][cuda]") {
  PolicyLoadResult loaded = load_policy(kPolicy, "p.yaml");
  REQUIRE(loaded.ok());
  const Policy& p = *loaded.policy;
  REQUIRE(p.classes[0].driver.has_value());
  CHECK(p.classes[0].driver->version == "535.104.05");
  CHECK(p.classes[0].driver->cuda.empty());
  REQUIRE(p.classes[1].driver.has_value());
  CHECK(p.classes[1].driver->version.empty());
  CHECK(p.classes[1].driver->cuda == "12.8");
  CHECK_FALSE(p.classes[2].driver.has_value());
  REQUIRE(p.cuda_images.size() == 1);
  CHECK(p.cuda_images[0].pattern == "registry.corp/ml/*-cu12.4*");
  CHECK(p.cuda_images[0].cuda == "12.4");
}

TEST_CASE("policy: driver and cudaImages errors", "[policy][cuda]") {
  for (const char* written : {"535.104.05.1", "r535", "535..1", ""}) {
    INFO(written);
    CHECK(policy_errors(replaced(kPolicy, "\"535.104.05\"", "\"" + std::string(written) + "\"")) ==
          Errors{"spec.classes.a100.driver.version: invalid driver version \"" +
                 std::string(written) +
                 "\": must be the version nvidia-smi prints, e.g. 535.104.05 (1 to 3 numbers "
                 "separated by dots) (p.yaml:10:25)"});
  }
  CHECK(policy_errors(replaced(kPolicy, "\"535.104.05\"", "\"390.48\"")) ==
        Errors{"spec.classes.a100.driver.version: driver 390.48 is older than CUDA 10.0's "
               "(410.48): gpuadmit has no CUDA version for it (p.yaml:10:25)"});
  for (const char* written : {"12", "12.2.1", "twelve"}) {
    INFO(written);
    CHECK(policy_errors(
              replaced(kPolicy, "{cuda: \"12.8\"}", "{cuda: \"" + std::string(written) + "\"}")) ==
          Errors{"spec.classes.h100.driver.cuda: invalid CUDA version \"" + std::string(written) +
                 "\": must be <major>.<minor>, the CUDA version nvidia-smi prints, e.g. 12.2 "
                 "(p.yaml:12:22)"});
  }
  CHECK(policy_errors(
            replaced(kPolicy, "{cuda: \"12.8\"}", "{cuda: \"12.8\", version: \"570.26\"}")) ==
        Errors{"spec.classes.h100.driver: give either version (the driver's) or cuda (the highest "
               "CUDA version it runs), not both: the driver version already says which CUDA it "
               "runs (p.yaml:12:15)"});
  CHECK(policy_errors(replaced(kPolicy, "{cuda: \"12.8\"}", "{}")) ==
        Errors{"spec.classes.h100.driver: must give version (the driver's, e.g. 535.104.05) or "
               "cuda (e.g. 12.2) (p.yaml:12:15)"});
  CHECK(policy_errors(replaced(kPolicy, "{cuda: \"12.8\"}", "{cuda: \"12.8\", branch: 570}")) ==
        Errors{"spec.classes.h100.driver.branch: unknown field \"branch\" (p.yaml:12:30)"});
  CHECK(policy_errors(replaced(kPolicy, "cuda: \"12.4\"}", "cuda: \"cu124\"}")) ==
        Errors{"spec.cudaImages[0].cuda: invalid CUDA version \"cu124\": must be "
               "<major>.<minor>[.<patch>], e.g. 12.4 or 12.4.1 (p.yaml:7:53)"});
  CHECK(policy_errors(replaced(kPolicy, "{pattern: \"registry.corp/ml/*-cu12.4*\", ", "{")) ==
        Errors{"spec.cudaImages[0].pattern: required field is missing (p.yaml:7:7)"});
}

}  // namespace cuda_policy_test
}  // namespace gpuadmit
