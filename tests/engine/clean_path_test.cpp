// engine/clean_path.h is Go's path/filepath.Clean on Linux. The first table is Go's own
// (src/path/filepath/path_test.go, Go 1.27: cleantests and nonwincleantests, every row); the
// reference file holds Go's answers for 4,093 more inputs
// (tests/engine/testdata/clean_path_reference.go writes it by calling filepath.Clean). Then the
// toolkit's device-list test built on it (engine/gpu_visibility.h names_devices_as_mount).

#include "engine/clean_path.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/gpu_visibility.h"

namespace clean_path_test {
namespace {

using gpuadmit::clean_path;

struct PathTest {
  std::string path, result;
};

// Go 1.27 src/path/filepath/path_test.go, `cleantests` then `nonwincleantests`, in order.
const std::vector<PathTest> kGoCleanTests = {
    // Already clean
    {"abc", "abc"},
    {"abc/def", "abc/def"},
    {"a/b/c", "a/b/c"},
    {".", "."},
    {"..", ".."},
    {"../..", "../.."},
    {"../../abc", "../../abc"},
    {"/abc", "/abc"},
    {"/", "/"},
    // Empty is current dir
    {"", "."},
    // Remove trailing slash
    {"abc/", "abc"},
    {"abc/def/", "abc/def"},
    {"a/b/c/", "a/b/c"},
    {"./", "."},
    {"../", ".."},
    {"../../", "../.."},
    {"/abc/", "/abc"},
    // Remove doubled slash
    {"abc//def//ghi", "abc/def/ghi"},
    {"abc//", "abc"},
    // Remove . elements
    {"abc/./def", "abc/def"},
    {"/./abc/def", "/abc/def"},
    {"abc/.", "abc"},
    // Remove .. elements
    {"abc/def/ghi/../jkl", "abc/def/jkl"},
    {"abc/def/../ghi/../jkl", "abc/jkl"},
    {"abc/def/..", "abc"},
    {"abc/def/../..", "."},
    {"/abc/def/../..", "/"},
    {"abc/def/../../..", ".."},
    {"/abc/def/../../..", "/"},
    {"abc/def/../../../ghi/jkl/../../../mno", "../../mno"},
    {"/../abc", "/abc"},
    {"a/../b:/../../c", "../c"},
    // Combinations
    {"abc/./../def", "def"},
    {"abc//./../def", "def"},
    {"abc/../../././../def", "../../def"},
    // nonwincleantests: remove leading doubled slash
    {"//abc", "/abc"},
    {"///abc", "/abc"},
    {"//abc//", "/abc"},
};

TEST_CASE("clean_path: Go's filepath.Clean table", "[engine][clean_path]") {
  for (const PathTest& t : kGoCleanTests) {
    INFO("Clean(\"" << t.path << "\")");
    CHECK(clean_path(t.path) == t.result);
    // Go's TestClean also cleans each result again: it is already clean.
    CHECK(clean_path(t.result) == t.result);
  }
}

std::vector<PathTest> go_reference() {
  const auto file = std::filesystem::path(GPUADMIT_SOURCE_DIR) / "tests" / "engine" / "testdata" /
                    "clean_path_go.tsv";
  std::ifstream in(file);
  std::vector<PathTest> rows;
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    rows.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return rows;
}

TEST_CASE("clean_path: agrees with Go on the reference inputs", "[engine][clean_path]") {
  const std::vector<PathTest> rows = go_reference();
  REQUIRE(rows.size() == 4093);
  size_t agree = 0;
  for (const PathTest& t : rows) {
    INFO("Clean(\"" << t.path << "\")");
    CHECK(clean_path(t.path) == t.result);
    agree += clean_path(t.path) == t.result ? 1 : 0;
  }
  CHECK(agree == rows.size());
}

TEST_CASE("clean_path: long inputs", "[engine][clean_path]") {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "/d";
  for (int i = 0; i < 10000; ++i) deep += "/..";
  CHECK(clean_path(deep) == "/");
  CHECK(clean_path(deep + "/x") == "/x");
  CHECK(clean_path(std::string(100000, '/')) == "/");
  CHECK(clean_path(deep.substr(1)) == ".");  // "d/d/.../../.." is relative
}

// The toolkit's test (cuda_image.go requestsFromMounts): Clean the container path, then a plain
// string prefix of /var/run/nvidia-container-devices. kubelet makes a relative mountPath absolute.
TEST_CASE("names_devices_as_mount: every spelling the toolkit reads", "[engine][clean_path]") {
  using gpuadmit::names_devices_as_mount;
  using gpuadmit::toolkit_mount_path;
  const std::vector<std::pair<std::string, std::string>> devices = {
      {"/var/run/nvidia-container-devices/all", "/var/run/nvidia-container-devices/all"},
      {"/var/run/nvidia-container-devicesall", "/var/run/nvidia-container-devicesall"},
      {"/var/run/x/../nvidia-container-devices/all", "/var/run/nvidia-container-devices/all"},
      {"//var/run/./nvidia-container-devices/0", "/var/run/nvidia-container-devices/0"},
      {"/var/run/nvidia-container-devices/GPU-1/", "/var/run/nvidia-container-devices/GPU-1"},
      {"var/run/nvidia-container-devices/1", "/var/run/nvidia-container-devices/1"},
      {"/../var/run/nvidia-container-devices/cdi/nvidia.com/gpu/all",
       "/var/run/nvidia-container-devices/cdi/nvidia.com/gpu/all"},
      {"/a/b/../../var/run/nvidia-container-devices/imex/0",
       "/var/run/nvidia-container-devices/imex/0"},
      // The root itself names no device to the toolkit; gpuadmit denies it too (stricter).
      {"/var/run/nvidia-container-devices", "/var/run/nvidia-container-devices"},
      {"/var/run/nvidia-container-devices/.", "/var/run/nvidia-container-devices"},
  };
  for (const auto& [path, cleaned] : devices) {
    INFO(path);
    CHECK(toolkit_mount_path(path) == cleaned);
    CHECK(names_devices_as_mount(path));
  }
  const std::vector<std::string> not_devices = {
      "/run/nvidia-container-devices/all",  // one root: a string compare, no symlink followed
      "/var/run/nvidia-container-device",
      "/var/run/nvidia-container-devices/../all",
      "/var/nvidia-container-devices/all",
      "/x/var/run/nvidia-container-devices/all",
      "/var/run/x/nvidia-container-devices/all",
      "/var/run/Nvidia-container-devices/all",
      "/data",
  };
  for (const std::string& path : not_devices) {
    INFO(path);
    CHECK_FALSE(names_devices_as_mount(path));
  }
}

}  // namespace
}  // namespace clean_path_test
