// engine/cuda.h: versions, NVIDIA's toolkit → driver table, image names and NVIDIA_REQUIRE_CUDA.
// Expectations come from NVIDIA's documents, cited per case, never from our output.

#include "engine/cuda.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace gpuadmit {
namespace cuda_test {
namespace {

std::string cuda_of_driver(const char* driver) {
  auto d = parse_driver_version(driver);
  REQUIRE(d);
  auto c = cuda_for_driver(*d);
  return c ? c->to_string() : "none";
}

std::string image_cuda(const char* image) {
  auto v = image_cuda_version(image);
  return v ? v->version.to_string() : "unknown";
}

DriverFacts facts(const char* driver) {
  DriverFacts f;
  f.driver = parse_driver_version(driver);
  f.cuda = cuda_for_driver(*f.driver);
  return f;
}

}  // namespace

TEST_CASE("cuda: versions parse and print as written", "[engine][cuda]") {
  CHECK(parse_cuda_version("12.4.1")->to_string() == "12.4.1");
  CHECK(parse_cuda_version("12.4")->to_string() == "12.4");
  CHECK(parse_cuda_version("12")->to_string() == "12.0");
  for (const char* bad : {"", ".", "12.", ".4", "12.4.1.0", "v12.4", "12.a", "123456.1", "-1.2"}) {
    INFO(bad);
    CHECK_FALSE(parse_cuda_version(bad));
  }
  CHECK(parse_driver_version("535.104.05")->text == "535.104.05");
  CHECK(compare_driver(*parse_driver_version("535.104.05"), *parse_driver_version("535.86.09")) ==
        1);  // numeric, not text: 104 > 86
  CHECK(compare_driver(*parse_driver_version("470"), *parse_driver_version("470.0.0")) == 0);
  CHECK_FALSE(parse_driver_version("535.104.05.1"));
  CHECK_FALSE(parse_driver_version("r535"));
}

// NVIDIA CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions",
// Linux x86_64: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
TEST_CASE("cuda: minimum driver of a toolkit release (Table 3)", "[engine][cuda]") {
  struct Case {
    const char* cuda;
    const char* driver;
  };
  for (const Case& c : {Case{"12.4", "550.54.14"},       // CUDA 12.4 GA >= 550.54.14
                        Case{"12.4.0", "550.54.14"},     //
                        Case{"12.4.1", "550.54.15"},     // CUDA 12.4 Update 1 >= 550.54.15
                        Case{"12.2.2", "535.104.05"},    // CUDA 12.2 Update 2 >= 535.104.05
                        Case{"12.0", "525.60.13"},       // CUDA 12.0 GA >= 525.60.13
                        Case{"11.8", "520.61.05"},       // CUDA 11.8 GA >= 520.61.05
                        Case{"12.8", "570.26"},          // CUDA 12.8 GA >= 570.26
                        Case{"11.7.1", "515.48.07"},     // CUDA 11.7 Update 1 >= 515.48.07
                        Case{"13.2.2", "595.71.05"},     // CUDA 13.2 Update 2 >= 595.71.05
                        Case{"12.6.9", "560.35.05"}}) {  // no 12.6.9 row: the latest below
    INFO(c.cuda);
    CHECK(minimum_driver(*parse_cuda_version(c.cuda)) == std::optional<std::string_view>(c.driver));
  }
  CHECK_FALSE(minimum_driver(*parse_cuda_version("12.7")));  // NVIDIA released no 12.7
  CHECK_FALSE(minimum_driver(*parse_cuda_version("14.0")));
}

TEST_CASE("cuda: the CUDA version a driver runs", "[engine][cuda]") {
  CHECK(cuda_of_driver("535.104.05") == "12.2");  // 12.2 Update 2's own driver
  CHECK(cuda_of_driver("535.54.03") == "12.2");   // 12.2 GA
  CHECK(cuda_of_driver("535.54.02") == "12.1");   // below 12.2 GA; 12.1 needs 530.30.02
  CHECK(cuda_of_driver("550.54.14") == "12.4");
  CHECK(cuda_of_driver("570.124.06") == "12.8");
  CHECK(cuda_of_driver("470.82.01") == "11.4");
  CHECK(cuda_of_driver("580.65.06") == "13.0");
  CHECK(cuda_of_driver("590.48.01") == "13.1");  // 13.1 Update 1's own driver
  CHECK(cuda_of_driver("410.48") == "10.0");
  CHECK(cuda_of_driver("390.48") == "none");
  // NVIDIA CUDA Compatibility guide, Table 2 (minor version compatibility):
  // https://docs.nvidia.com/deploy/cuda-compatibility/index.html
  CHECK(minor_version_compat_driver(12) == std::optional<std::string_view>("525.60.13"));
  CHECK(minor_version_compat_driver(11) == std::optional<std::string_view>("450.80.02"));
  CHECK_FALSE(minor_version_compat_driver(13));
}

TEST_CASE("cuda: an image's CUDA version from its name", "[engine][cuda]") {
  struct Case {
    const char* image;
    const char* cuda;
  };
  for (const Case& c : {
           // https://hub.docker.com/r/nvidia/cuda: tags begin with the CUDA version.
           Case{"nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", "12.4.1"},
           Case{"docker.io/nvidia/cuda:11.8.0-base-ubuntu22.04", "11.8.0"},
           Case{"nvcr.io/nvidia/cuda:12.2.2-devel-ubi8", "12.2.2"},
           Case{"nvidia/cuda:12.4.1-runtime-ubuntu22.04@sha256:0123", "12.4.1"},
           Case{"nvidia/cuda:latest", "unknown"},  // no version in the tag: not guessed
           Case{"nvidia/cuda@sha256:0123", "unknown"},
           // NGC framework releases (Frameworks Support Matrix; PyTorch release notes, "Driver
           // Requirements": "Release 24.05 is based on CUDA 12.4.1", 23.10 on 12.2.2, 25.01 on
           // 12.8.0).
           Case{"nvcr.io/nvidia/pytorch:24.05-py3", "12.4.1"},
           Case{"nvcr.io/nvidia/tensorflow:23.10-tf2-py3", "12.2.2"},
           Case{"nvcr.io/nvidia/tritonserver:25.01-py3", "12.8.0"},
           Case{"nvcr.io/nvidia/pytorch:19.05-py3", "unknown"},  // outside the table
           Case{"nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04", "unknown"},
           // cuda<major>.<minor> tokens: https://hub.docker.com/r/pytorch/pytorch tags.
           Case{"pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime", "12.1"},
           Case{"pytorch/pytorch:2.1.2-cuda11.8-cudnn8-devel", "11.8"},
           Case{"ghcr.io/org/train:v3-cuda12.4.1", "12.4.1"},
           // cu<3 digits>: PyTorch's wheel index names (download.pytorch.org/whl/cu121).
           Case{"vllm/vllm-openai:v0.4.0-cu121", "12.1"},
           Case{"registry.corp/ml/train:1.0_cu118_py310", "11.8"},
           Case{"registry.corp/ml/train:cuda", "unknown"},
           Case{"registry.corp/cuda12.4/train:1.0", "unknown"},  // the repository is not read
           Case{"registry.corp:5000/train", "unknown"},          // a port, not a tag
           Case{"registry.corp/ml/train:cu1210", "unknown"},
           Case{"busybox", "unknown"},
       }) {
    INFO(c.image);
    CHECK(image_cuda(c.image) == c.cuda);
  }
  CHECK(image_cuda_version("nvcr.io/nvidia/pytorch:24.05-py3")->source ==
        CudaSource::kNgcFramework);
}

// The NGC release table (engine/cuda.cc kNgcReleases) through the public API: the first and last
// rows, every release where the CUDA minor changes, the rows whose update the notes leave open,
// and releases without an NVIDIA statement. Each expectation is the "Driver Requirements"
// sentence "Release YY.MM is based on CUDA ..." of the cited page.
// long: one table, one case per checked release with its source
TEST_CASE("cuda: NGC framework releases map to the CUDA their release notes name",
          "[engine][cuda][ngc]") {
  struct Case {
    const char* image;
    const char* cuda;
  };
  for (
      const Case& c : {
          // https://docs.nvidia.com/deeplearning/sdk/inference-release-notes/rel-22-12.html: "based
          // on CUDA 11.8.0" (the first row)
          Case{"nvcr.io/nvidia/tritonserver:22.12-py3", "11.8.0"},
          // https://docs.nvidia.com/deeplearning/frameworks/tensorflow-release-notes/rel-23-01.html:
          // "based on CUDA 12.0.1"
          Case{"nvcr.io/nvidia/tensorflow:23.01-tf2-py3", "12.0.1"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-23-03.html:
          // "based on CUDA 12.1.0"
          Case{"nvcr.io/nvidia/pytorch:23.03-py3", "12.1.0"},
          // https://docs.nvidia.com/deeplearning/sdk/inference-release-notes/rel-23-08.html: "based
          // on CUDA 12.2.1"
          Case{"nvcr.io/nvidia/pytorch:23.08-py3", "12.2.1"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-23-11.html:
          // "based on CUDA 12.3.0"
          Case{"nvcr.io/nvidia/pytorch:23.11-py3", "12.3.0"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-24-03.html:
          // "based on NVIDIA CUDA 12.4.0.41"
          Case{"nvcr.io/nvidia/pytorch:24.03-py3", "12.4.0"},
          // https://docs.nvidia.com/deeplearning/sdk/inference-release-notes/rel-24-04.html: "based
          // on NVIDIA CUDA 12.4" (no update named; was 12.4.1)
          Case{"nvcr.io/nvidia/pytorch:24.04-py3", "12.4"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-24-06.html:
          // "based on NVIDIA CUDA 12.5.0.23"
          Case{"nvcr.io/nvidia/pytorch:24.06-py3", "12.5.0"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-24-08.html:
          // "based on CUDA 12.6" (no update named; was 12.6.0)
          Case{"nvcr.io/nvidia/pytorch:24.08-py3", "12.6"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-01.html:
          // "based on CUDA 12.8.0.038"
          Case{"nvcr.io/nvidia/pytorch:25.01-py3", "12.8.0"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/Chunk786889861.html
          // (Release 25.04): "based on CUDA 12.9.0"
          Case{"nvcr.io/nvidia/pytorch:25.04-py3", "12.9.0"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-06.html:
          // "based on CUDA 12.9.1.010"
          Case{"nvcr.io/nvidia/pytorch:25.06-py3", "12.9.1"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-08.html:
          // "based on CUDA 13.0.0.044" (added)
          Case{"nvcr.io/nvidia/pytorch:25.08-py3", "13.0.0"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-26-02.html:
          // "based on CUDA 13.1.1" (added)
          Case{"nvcr.io/nvidia/pytorch:26.02-py3", "13.1.1"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-26-04.html:
          // "based on CUDA 13.2.1" (added)
          Case{"nvcr.io/nvidia/pytorch:26.04-py3", "13.2.1"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-26-06.html:
          // "based on CUDA 13.3.0" (added)
          Case{"nvcr.io/nvidia/pytorch:26.06-py3", "13.3.0"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-26-08.html:
          // "based on CUDA 13.4.1" (added)
          Case{"nvcr.io/nvidia/pytorch:26.08-py3", "13.4.1"},
          // https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-26-10.html:
          // "based on CUDA 13.4.3.001" (added; the last row)
          Case{"nvcr.io/nvidia/tritonserver:26.10-py3", "13.4.3"},
          // No NVIDIA statement found: removed (23.02, 24.09, 24.11, 25.05), never listed
          // (25.07: no Triton release; 26.01), and after the table (26.11).
          Case{"nvcr.io/nvidia/pytorch:23.02-py3", "unknown"},
          Case{"nvcr.io/nvidia/pytorch:24.09-py3", "unknown"},
          Case{"nvcr.io/nvidia/pytorch:24.11-py3", "unknown"},
          Case{"nvcr.io/nvidia/pytorch:25.05-py3", "unknown"},
          Case{"nvcr.io/nvidia/pytorch:25.07-py3", "unknown"},
          Case{"nvcr.io/nvidia/pytorch:26.01-py3", "unknown"},
          Case{"nvcr.io/nvidia/pytorch:26.11-py3", "unknown"},
      }) {
    INFO(c.image);
    CHECK(image_cuda(c.image) == c.cuda);
  }
}

TEST_CASE("cuda: glob patterns", "[engine][cuda]") {
  CHECK(glob_match("registry.corp/ml/*-cu12.4*", "registry.corp/ml/train:1.0-cu12.4-py3"));
  CHECK_FALSE(glob_match("registry.corp/ml/*-cu12.4*", "registry.corp/ml/train:1.0-cu12.3"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("a*b*c", "axxbyyc"));
  CHECK_FALSE(glob_match("a*b*c", "axxbyy"));
  CHECK_FALSE(glob_match("abc", "abcd"));
  // Linear, not exponential, on a hostile pattern.
  CHECK_FALSE(glob_match(std::string(200, '*') + "b", std::string(10000, 'a')));
}

// NVIDIA_REQUIRE_CUDA as nvidia-container-toolkit evaluates it
// (internal/requirements/constraints/factory.go): spaces OR, commas AND. The value is that of
// nvidia/cuda:12.4.1-base-ubuntu22.04's Dockerfile (gitlab.com/nvidia/container-images/cuda),
// its first branches.
TEST_CASE("cuda: NVIDIA_REQUIRE_CUDA", "[engine][cuda]") {
  const std::string cuda124 =
      "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471";
  CHECK(evaluate_require_cuda("cuda>=12.4", facts("550.54.14")) == Tristate::kTrue);
  CHECK(evaluate_require_cuda("cuda>=12.4", facts("535.104.05")) == Tristate::kFalse);
  CHECK(evaluate_require_cuda("cuda>=12.2", facts("535.104.05")) == Tristate::kTrue);
  CHECK(evaluate_require_cuda("cuda>=12.2.2", facts("535.104.05")) == Tristate::kFalse);
  // The R535 driver is on no forward-compatibility branch of the value: refused.
  CHECK(evaluate_require_cuda(cuda124, facts("535.104.05")) == Tristate::kFalse);
  // An R470 driver: the brand (read from NVML on the node) decides.
  CHECK(evaluate_require_cuda(cuda124, facts("470.82.01")) == Tristate::kUnknown);
  CHECK(evaluate_require_cuda(cuda124, facts("550.54.15")) == Tristate::kTrue);
  // The class states only the CUDA version: driver constraints are unknown.
  DriverFacts cuda_only;
  cuda_only.cuda = parse_cuda_version("12.2");
  CHECK(evaluate_require_cuda(cuda124, cuda_only) == Tristate::kUnknown);
  CHECK(evaluate_require_cuda("cuda>=12.8", cuda_only) == Tristate::kFalse);
  // Unsupported properties are skipped; an empty requirement holds.
  CHECK(evaluate_require_cuda("", facts("535.104.05")) == Tristate::kTrue);
  CHECK(evaluate_require_cuda("os>=1", facts("535.104.05")) == Tristate::kTrue);
  CHECK(evaluate_require_cuda("os>=1,cuda>=12.4", facts("535.104.05")) == Tristate::kFalse);
  CHECK(evaluate_require_cuda("driver>=535,driver<536", facts("535.104.05")) == Tristate::kTrue);
  CHECK(evaluate_require_cuda("driver=535.104.05", facts("535.104.05")) == Tristate::kTrue);
  CHECK(evaluate_require_cuda("driver!=535.104.05", facts("535.104.05")) == Tristate::kFalse);
  // What the toolkit cannot read stays unknown: no finding from it.
  CHECK(evaluate_require_cuda("cuda", facts("535.104.05")) == Tristate::kUnknown);
  CHECK(evaluate_require_cuda("cuda>=twelve", facts("535.104.05")) == Tristate::kUnknown);
}

TEST_CASE("cuda: no input throws", "[engine][cuda]") {
  for (const std::string& s :
       {std::string("\0\xff:", 3), std::string(":::"), std::string("@"), std::string("/:"),
        std::string("cu"), std::string("a:cuda."), std::string(",, ,"), std::string("<>=!"),
        std::string(100000, '9'), std::string("x:") + std::string(5000, '-')}) {
    CHECK_NOTHROW(image_cuda_version(s));
    CHECK_NOTHROW(parse_cuda_version(s));
    CHECK_NOTHROW(parse_driver_version(s));
    CHECK_NOTHROW(evaluate_require_cuda(s, facts("535.104.05")));
  }
}

}  // namespace cuda_test
}  // namespace gpuadmit
