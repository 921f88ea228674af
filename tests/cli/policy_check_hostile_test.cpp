// Issue 11's reproducer end to end: `gpuadmit policy check` on the 6-byte file `,a: 1` (yaml-cpp
// 0.7's LoadAll looped on it, allocating until killed) prints one error with its line and exits 2.
// timeout(1) turns a regression into a failed check (exit 137) instead of a hung suite.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/process.h"

namespace gpuadmit {
namespace policy_check_hostile_test {
namespace {

const std::string kBinary = GPUADMIT_BINARY;

TEST_CASE("policy check: `,a: 1` is one YAML error at 1:1, exit 2", "[cli][issue11]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "gpuadmit-issue11-comma.yaml").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << ",a: 1";
  }
  auto r = testing::run_command("timeout -s KILL 20 " + kBinary + " policy check " + path);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        "invalid YAML: did not find expected node content (found \",\") (" + path + ":1:1)\n");
  std::filesystem::remove(path);

  r = testing::run_command("timeout -s KILL 20 " + kBinary + " policy check -", "- a\n, b\n");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "invalid YAML: did not find expected node content (found \",\") (<stdin>:2:1)\n");
}

}  // namespace
}  // namespace policy_check_hostile_test
}  // namespace gpuadmit
