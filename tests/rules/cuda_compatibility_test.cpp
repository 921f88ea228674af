#include "rules/cuda_compatibility.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace cuda_compatibility_test {
namespace {

// Classes with a driver: a100 by version (535.104.05 is CUDA 12.2 Update 2's driver in NVIDIA's
// CUDA Toolkit Release Notes, Table 3: it runs CUDA 12.2), h100 by CUDA version, l4 without.
constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: cuda
spec:
  cudaImages:
    - {pattern: "registry.corp/ml/*-cu12.4*", cuda: "12.4"}
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
      driver: {version: "535.104.05"}
    h100:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      driver: {cuda: "12.4"}
    l4:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
)YAML";

std::string gpu_container(std::string_view name, std::string_view image,
                          std::string_view extra = "") {
  std::string out = R"({"name":")" + std::string(name) + R"(","image":")" + std::string(image) +
                    R"(","resources":{"limits":{"nvidia.com/gpu":"1"}})";
  if (!extra.empty()) out += "," + std::string(extra);
  return out + "}";
}

std::string cpu_container(std::string_view name, std::string_view image) {
  return R"({"name":")" + std::string(name) + R"(","image":")" + std::string(image) + R"("})";
}

std::string on(std::string_view cls, std::string_view more = "") {
  return "{\"gpuadmit.io/class\":\"" + std::string(cls) + "\"" + std::string(more) + "}";
}

const std::string kA100 =
    "class a100's driver 535.104.05 runs up to CUDA 12.2; use an image built for CUDA 12.2 or "
    "earlier, or a class whose driver runs CUDA ";

TEST_CASE("rule GPU027: a container's CUDA version runs on its class's driver", "[rules][GPU027]") {
  auto policy = policy_from_yaml(kPolicy);
  auto rule = make_cuda_compatibility_rule();
  REQUIRE(rule->id() == "GPU027");
  run_cases(
      *rule, policy,
      {
          // NGC PyTorch 24.05 is built on CUDA 12.4.1 (Frameworks Support Matrix), whose minimum
          // driver is 550.54.15 (Table 3, CUDA 12.4 Update 1).
          {"NGC PyTorch 24.05 on a 535 driver",
           "open",
           make_pod(gpu_container("trainer", "nvcr.io/nvidia/pytorch:24.05-py3"), "", on("a100")),
           {"spec.containers[0].image | container trainer: image "
            "nvcr.io/nvidia/pytorch:24.05-py3 needs CUDA 12.4.1 (driver >= 550.54.15); " +
            kA100 + "12.4"}},
          {"nvidia/cuda 12.2.2 runs on the CUDA 12.2 driver",
           "open",
           make_pod(gpu_container("a", "nvidia/cuda:12.2.2-runtime-ubuntu22.04"), "", on("a100")),
           {}},
          {"nvidia/cuda 12.4.1 on the CUDA 12.4 class",
           "open",
           make_pod(gpu_container("a", "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"), "",
                    on("h100")),
           {}},
          // CUDA 12.8 GA: driver >= 570.26 (Table 3).
          {"a cuda12.8 tag on the CUDA 12.4 class (class given as a CUDA version)",
           "open",
           make_pod(gpu_container("a", "ghcr.io/org/train:2.6-cuda12.8-runtime"), "", on("h100")),
           {"spec.containers[0].image | container a: image ghcr.io/org/train:2.6-cuda12.8-runtime "
            "needs CUDA 12.8 (driver >= 570.26); class h100's driver runs up to CUDA 12.4; use an "
            "image built for CUDA 12.4 or earlier, or a class whose driver runs CUDA 12.8"}},
          {"the platform's own pattern is read first",
           "open",
           make_pod(gpu_container("a", "registry.corp/ml/train:1-cu12.4-py3"), "", on("a100")),
           {"spec.containers[0].image | container a: image registry.corp/ml/train:1-cu12.4-py3 "
            "(spec.cudaImages[0]) needs CUDA 12.4 (driver >= 550.54.14); " +
            kA100 + "12.4"}},
          {"an unknown image says nothing",
           "open",
           make_pod(gpu_container("a", "registry.corp/ml/train:latest"), "", on("a100")),
           {}},
          {"a class without a driver says nothing",
           "open",
           make_pod(gpu_container("a", "nvcr.io/nvidia/pytorch:25.01-py3"), "", on("l4")),
           {}},
          {"a container without GPUs is not judged",
           "open",
           make_pod(gpu_container("a", "nvidia/cuda:12.2.0-base-ubuntu22.04") + "," +
                        cpu_container("sidecar", "nvidia/cuda:12.8.0-base-ubuntu22.04"),
                    "", on("a100")),
           {}},
          // CUDA 11.8 runs on a driver that runs 12.2 (the driver is backward compatible).
          {"an older CUDA runs on a newer driver",
           "open",
           make_pod(gpu_container("a", "pytorch/pytorch:2.1.2-cuda11.8-cudnn8-runtime"), "",
                    on("a100")),
           {}},
          {"the annotation states an unknown image's CUDA version",
           "open",
           make_pod(gpu_container("a", "registry.corp/ml/train:latest"), "",
                    on("a100", R"(,"gpuadmit.io/cuda-version":"12.8")")),
           {"metadata.annotations[\"gpuadmit.io/cuda-version\"] | container a: "
            "gpuadmit.io/cuda-version needs CUDA 12.8 (driver >= 570.26); " +
            kA100 + "12.8"}},
          {"the annotation cannot lower what the image's name says",
           "open",
           make_pod(gpu_container("a", "nvcr.io/nvidia/pytorch:24.05-py3"), "",
                    on("a100", R"(,"gpuadmit.io/cuda-version":"12.0")")),
           {"spec.containers[0].image | container a: image nvcr.io/nvidia/pytorch:24.05-py3 "
            "needs CUDA 12.4.1 (driver >= 550.54.15); " +
            kA100 + "12.4"}},
          {"an unreadable annotation is ignored",
           "open",
           make_pod(gpu_container("a", "nvidia/cuda:12.2.0-base-ubuntu22.04"), "",
                    on("a100", R"(,"gpuadmit.io/cuda-version":"latest")")),
           {}},
      });
}

// NVIDIA_REQUIRE_CUDA in the pod's env replaces the image's; the toolkit evaluates it
// (nvidia-container-toolkit internal/requirements/constraints/factory.go) and refuses the
// container when no ORed branch holds.
TEST_CASE("rule GPU027: NVIDIA_REQUIRE_CUDA in env", "[rules][GPU027]") {
  auto policy = policy_from_yaml(kPolicy);
  auto rule = make_cuda_compatibility_rule();
  auto env = [](std::string_view value, std::string_view more = "") {
    return R"("env":[{"name":"OTHER","value":"x"},{"name":"NVIDIA_REQUIRE_CUDA","value":")" +
           std::string(value) + "\"}" + std::string(more) + "]";
  };
  run_cases(
      *rule, policy,
      {
          {"cuda>=12.8 against a CUDA 12.2 driver",
           "open",
           make_pod(gpu_container("a", "registry.corp/ml/train:latest", env("cuda>=12.8")), "",
                    on("a100")),
           {"spec.containers[0].env[1] | container a: env NVIDIA_REQUIRE_CUDA \"cuda>=12.8\" is "
            "not met by class a100's driver 535.104.05 (CUDA 12.2): NVIDIA's container "
            "toolkit refuses to start the container (\"unsatisfied condition\"); use an image "
            "built for CUDA 12.2 or earlier, or a class whose driver meets it"}},
          {"a forward-compatibility branch the R535 driver is on",
           "open",
           make_pod(gpu_container("a", "registry.corp/ml/train:latest",
                                  env("cuda>=12.4 brand=tesla,driver>=535,driver<536")),
                    "", on("a100")),
           {}},
          {"NVIDIA_DISABLE_REQUIRE turns the toolkit's check off",
           "open",
           make_pod(gpu_container(
                        "a", "registry.corp/ml/train:latest",
                        env("cuda>=12.8", R"(,{"name":"NVIDIA_DISABLE_REQUIRE","value":"true"})")),
                    "", on("a100")),
           {}},
          {"a satisfied requirement",
           "open",
           make_pod(gpu_container("a", "registry.corp/ml/train:latest", env("cuda>=12.2")), "",
                    on("a100")),
           {}},
      });
}

}  // namespace
}  // namespace cuda_compatibility_test
}  // namespace gpuadmit::testing
