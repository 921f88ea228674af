// GPU027 in lint: `gpuadmit lint` runs the same rules as the webhook, so a workload kept in Git
// whose image needs a newer CUDA than its class's driver is reported at the image's line.

#include <catch2/catch.hpp>

#include <string>

#include "engine/json.h"
#include "tests/support/process.h"

namespace gpuadmit::lint {
namespace cuda_lint_test {
namespace {

// A Deployment of the NGC PyTorch 24.05 image (CUDA 12.4.1: NVIDIA Frameworks Support Matrix;
// driver >= 550.54.15: CUDA Toolkit Release Notes, Table 3, CUDA 12.4 Update 1) and a sidecar that
// gets no GPU (not judged).
constexpr const char* kDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: ml
spec:
  replicas: 1
  selector: {matchLabels: {app: trainer}}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
      - name: logs
        image: nvidia/cuda:12.8.0-base-ubuntu22.04
)";

TEST_CASE("lint reports GPU027 at the image's line", "[lint][cli][GPU027]") {
  // Class a100's driver is 535.104.05 (the golden cases' GPU027 policy).
  const std::string policy = std::string("'") + GPUADMIT_SOURCE_DIR +
                             "/tests/cases/270-gpu027-ngc-pytorch-needs-newer-driver/policy.yaml'";
  const auto r = testing::run_command(
      std::string("'") + GPUADMIT_BINARY + "' lint --output json --policy " + policy + " -",
      kDeployment);
  INFO(r.err);
  CHECK(r.exit_code == 1);  // a deny finding
  const Json report = Json::parse(r.out);
  REQUIRE(report["findings"].size() == 1);
  const Json& f = report["findings"][0];
  CHECK(f["rule"] == "GPU027");
  CHECK(f["severity"] == "deny");
  CHECK(f["kind"] == "Deployment");
  CHECK(f["line"] == 15);
  CHECK(f["path"] == "spec.template.spec.containers[0].image");
  CHECK(f["message"] ==
        "container trainer: image nvcr.io/nvidia/pytorch:24.05-py3 needs CUDA 12.4.1 (driver >= "
        "550.54.15); class a100's driver 535.104.05 runs up to CUDA 12.2; use an image built for "
        "CUDA 12.2 or earlier, or a class whose driver runs CUDA 12.4");
}

}  // namespace
}  // namespace cuda_lint_test
}  // namespace gpuadmit::lint
