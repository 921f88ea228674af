// engine/cuda.h, GPU027's readers of what the requester writes: CUDA and driver versions, image
// names, the policy's image globs and NVIDIA_REQUIRE_CUDA (docs/rules.md#gpu027). For any input:
//   - a CUDA version that parses prints as a version that parses back to itself; a driver
//     version equals itself and has 1 to 3 parts;
//   - an image's CUDA version, when one is read, prints as a version that parses;
//   - `*` matches everything, a pattern without `*` matches exactly itself;
//   - NVIDIA_REQUIRE_CUDA with nothing known of the node is never false (no finding from what
//     gpuadmit cannot know), and gives the same answer twice;
//   - the two readings of NVIDIA's driver table agree: a driver at a CUDA release's minimum runs
//     that release's major.minor (cuda_for_driver of minimum_driver).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/cuda.h"
#include "fuzz/check.h"

namespace {

using namespace gpuadmit;

bool same(const CudaVersion& a, const CudaVersion& b) {
  return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
}

void versions(std::string_view input) {
  if (const std::optional<CudaVersion> v = parse_cuda_version(input)) {
    const std::optional<CudaVersion> back = parse_cuda_version(v->to_string());
    FUZZ_CHECK(back && same(*back, *v), "a CUDA version prints as itself");
    if (const std::optional<std::string_view> minimum = minimum_driver(*v)) {
      const std::optional<DriverVersion> driver = parse_driver_version(*minimum);
      FUZZ_CHECK(driver.has_value(), "the table's drivers parse");
      const std::optional<CudaVersion> runs = cuda_for_driver(*driver);
      const CudaVersion release{v->major, v->minor, std::nullopt};
      FUZZ_CHECK(runs && release.runs_on(*runs), "a release's minimum driver runs the release");
    }
  }
  if (const std::optional<DriverVersion> d = parse_driver_version(input)) {
    FUZZ_CHECK(compare_driver(*d, *d) == 0, "a driver version equals itself");
    FUZZ_CHECK(!d->parts.empty() && d->parts.size() <= 3, "1 to 3 parts");
  }
}

void images(std::string_view input) {
  if (const std::optional<ImageCuda> image = image_cuda_version(input)) {
    FUZZ_CHECK(parse_cuda_version(image->version.to_string()).has_value(),
               "an image's CUDA version is a version");
  }
  FUZZ_CHECK(glob_match("*", input), "* matches everything");
  if (input.find('*') == std::string_view::npos) {
    FUZZ_CHECK(glob_match(input, input), "a pattern without * matches itself");
    FUZZ_CHECK(!glob_match(input, std::string(input) + "x"), "and nothing longer");
  }
}

void requirements(std::string_view input) {
  const Tristate unknown = evaluate_require_cuda(input, DriverFacts{});
  FUZZ_CHECK(unknown != Tristate::kFalse, "nothing known of the node: never false");
  DriverFacts known;
  known.driver = parse_driver_version("535.104.05");
  known.cuda = CudaVersion{12, 2, std::nullopt};
  FUZZ_CHECK(evaluate_require_cuda(input, known) == evaluate_require_cuda(input, known),
             "the same answer twice");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  versions(input);
  images(input);
  requirements(input);
  return 0;
}
