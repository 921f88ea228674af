#pragma once
// CUDA versions and what runs them (GPU027, docs/rules.md#gpu027): the version type, NVIDIA's
// toolkit → minimum driver table, the CUDA version a driver runs, a container image's CUDA version
// from its name, and NVIDIA_REQUIRE_CUDA as NVIDIA's container toolkit evaluates it. Pure data
// and string handling: no HTTP, no files, no exceptions on any input (fuzz-friendly).
//
//   parse_cuda_version("12.4.1")                          // CudaVersion{12, 4, 1}
//   cuda_for_driver(*parse_driver_version("535.104.05"))  // 12.2
//   image_cuda_version("nvcr.io/nvidia/pytorch:24.05-py3")  // 12.4.1 (NGC release 24.05)

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit {

// major.minor[.patch]; `patch` is nullopt when not written ("12.4").
struct CudaVersion {
  int major = 0;
  int minor = 0;
  std::optional<int> patch;

  std::string to_string() const;
  // major.minor only: what the driver reports (cuDriverGetVersion) and NVIDIA_REQUIRE_CUDA's
  // `cuda>=12.4` compares.
  bool runs_on(const CudaVersion& driver_cuda) const {
    return major < driver_cuda.major || (major == driver_cuda.major && minor <= driver_cuda.minor);
  }
};

// "12", "12.4", "12.4.1": decimal components of at most 4 digits. nullopt otherwise.
std::optional<CudaVersion> parse_cuda_version(std::string_view text);

// An NVIDIA driver version, "535.104.05": 1 to 3 dot-separated decimal components compared
// numerically (leading zeros kept for printing only).
struct DriverVersion {
  std::vector<int> parts;
  std::string text;  // as written
};
std::optional<DriverVersion> parse_driver_version(std::string_view text);
// Numeric comparison, a missing component counting as 0: -1, 0, 1.
int compare_driver(const DriverVersion& a, const DriverVersion& b);

// The minimum Linux x86_64 driver of a CUDA toolkit release (NVIDIA CUDA Toolkit Release Notes,
// Table 3): for "12.4.1" the 12.4 Update 1 row, for "12.4" (or a patch NVIDIA lists no row for)
// the latest row of 12.4 at or below it, else its GA row. nullopt for a release not in the table.
std::optional<std::string_view> minimum_driver(const CudaVersion& cuda);

// The highest CUDA major.minor a driver runs as the toolkit reports it (the last Table 3 row whose
// minimum it meets); nullopt for a driver older than every row.
std::optional<CudaVersion> cuda_for_driver(const DriverVersion& driver);

// The minimum driver of CUDA minor-version compatibility for a major release (NVIDIA CUDA
// Compatibility guide, "Minor Version Compatibility", Table 2): "525.60.13" for 12.x,
// "450.80.02" for 11.x; nullopt for other majors.
std::optional<std::string_view> minor_version_compat_driver(int major);

// Where an image's CUDA version was read from, for messages and tests.
enum class CudaSource { kCudaImage, kNgcFramework, kCudaTag, kCuTag };

struct ImageCuda {
  CudaVersion version;
  CudaSource source = CudaSource::kCudaTag;
};

// A container image's CUDA version from its name alone (docs/rules.md#gpu027), or nullopt:
//   nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 (also docker.io/, nvcr.io/nvidia/cuda)
//   nvcr.io/nvidia/<framework>:24.05-py3 through the NGC release table (pytorch, tensorflow,
//     tritonserver, nemo, jax, ...)
//   a tag with a cuda<major>.<minor>[.<patch>] token: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
//   a tag with a cu<3 digits> token (PyTorch's wheel convention): cu121 → 12.1, cu118 → 11.8
// Only the tag is read (after the last ':' that follows the last '/', before any '@'); an image
// with a digest and no tag is unknown. Never guesses.
std::optional<ImageCuda> image_cuda_version(std::string_view image);

// `*` matches any run of characters (including '/' and ':'); every other character itself.
bool glob_match(std::string_view pattern, std::string_view text);

// What the node is known to offer, for NVIDIA_REQUIRE_CUDA: the driver version (when the class
// states it) and the CUDA major.minor it runs. brand and arch are never known at admission.
struct DriverFacts {
  std::optional<DriverVersion> driver;
  std::optional<CudaVersion> cuda;
};

enum class Tristate { kTrue, kFalse, kUnknown };

// NVIDIA_REQUIRE_CUDA evaluated as nvidia-container-toolkit does
// (internal/requirements/constraints/factory.go newConstraintFromRequirement): constraints
// separated by spaces are ORed, those separated by commas ANDed; each is
// <property><op><value> with op one of != <= >= = < >; properties cuda, driver, arch (versions)
// and brand (a string); a constraint on another property is skipped; an empty requirement always
// holds. kUnknown when the outcome depends on what is not known (brand, arch, an unknown driver);
// kTrue for a malformed requirement we cannot read (no finding from what we cannot read).
Tristate evaluate_require_cuda(std::string_view requirement, const DriverFacts& facts);

}  // namespace gpuadmit
