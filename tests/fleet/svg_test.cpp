// `--svg`: one cell per GPU, stranded GPUs marked, and a file rsvg-convert renders to a PNG of
// the SVG's size (valid SVG, readable in a browser).

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "fleet/svg.h"
#include "tests/fleet/fleet_test_util.h"
#include "tests/support/process.h"

namespace gpuadmit::fleet {
namespace svg_test {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The 4,5,3 fleet of packing_test.cpp: 9 stranded GPUs on a100 (3 on each of nodes 1..3).
std::string deployments() {
  std::string out;
  for (auto [name, replicas, gpus] : {std::tuple{"five", 4, 5}, {"four", 2, 4}, {"three", 1, 3}}) {
    out += std::string("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ") + name +
           ", namespace: ml-a}\nspec:\n  replicas: " + std::to_string(replicas) +
           "\n  template:\n    spec:\n      containers:\n      - {name: c, image: i, resources: "
           "{limits: {nvidia.com/gpu: " +
           std::to_string(gpus) + "}}}\n";
  }
  return out;
}

TEST_CASE("fleet svg: one cell per GPU of every class, stranded ones marked, a legend") {
  const auto r = testing::run_fleet(deployments());
  const std::string svg = to_svg(r.report, r.input);
  // a100 4 × 8, h100mig 1 × 2, l4 2 × 4.
  CHECK(count(svg, "<rect class=\"gpu ") == 32 + 2 + 8);
  CHECK(count(svg, "data-class=\"a100\"") == 32);
  CHECK(count(svg, " stranded\" data-class=\"a100\"") == 9);
  CHECK(count(svg, "<rect class=\"gpu used\" data-class=\"a100\"") == 23);
  CHECK(count(svg, "<rect class=\"legend\"") == 2);  // "five" and "three" hold GPUs; "four" none
  CHECK(svg.find(">ml-a/five (Deployment)</text>") != std::string::npos);
  CHECK(svg.find(">2 × 4 GPU ml-a/four (Deployment): class full</text>") != std::string::npos);
}

// PNG: 8-byte signature, then the IHDR chunk whose data starts with width and height (big
// endian) at offsets 16 and 20.
std::pair<uint32_t, uint32_t> png_size(const std::string& png) {
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
  };
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0) return {0, 0};
  return {be32(16), be32(20)};
}

TEST_CASE("fleet svg: rsvg-convert renders it to a PNG of the SVG's size") {
  const auto r = testing::run_fleet(deployments());
  const std::string svg = to_svg(r.report, r.input);
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("<svg [^>]*width=\"(\\d+)\" height=\"(\\d+)\"")));
  const uint32_t width = std::stoul(m[1]), height = std::stoul(m[2]);
  CHECK(width >= 640);
  CHECK(height > 4 * 21);  // at least a100's four rows
  char dir_template[] = "/tmp/gpuadmit-svg-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::ofstream(dir + "/fleet.svg") << svg;
  auto run =
      gpuadmit::testing::run_command("rsvg-convert -o " + dir + "/fleet.png " + dir + "/fleet.svg");
  CHECK(run.err == "");
  REQUIRE(run.exit_code == 0);
  const std::string png = gpuadmit::testing::slurp(dir + "/fleet.png");
  CHECK(png_size(png) == std::pair(width, height));
  CHECK(png.size() > 2000);  // drawn, not blank
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace svg_test
}  // namespace gpuadmit::fleet
