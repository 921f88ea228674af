// `gpuadmit lint --jobs N` (docs/lint.md "--jobs"): files read and evaluated on N threads, the
// output in input order and byte for byte the one-thread run's, in every format, with --fix to
// standard output and with --fix --write. Inputs: the shared corpus of real manifests and lint's
// golden cases (their policies: GPU013's namespace sums, DRA claims across files, unreadable
// documents). Run as the binary, so that a ThreadSanitizer build (scripts/test.sh's TSan phase:
// target test_lint_jobs, tests '^lint_jobs:') checks the threads too.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace jobs_test {

namespace {

namespace fs = std::filesystem;
using gpuadmit::testing::ProcessResult;
using gpuadmit::testing::run_command;

const fs::path kCorpus = fs::path(GPUADMIT_SHARED_DIR) / "corpus";
const fs::path kLintCases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "lint" / "cases";

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// `gpuadmit lint ARGS` from `dir`.
ProcessResult lint(const fs::path& dir, const std::string& args, const std::string& input = "") {
  return run_command(
      "cd " + quoted(dir.string()) + " && " + quoted(GPUADMIT_BINARY) + " lint --no-color " + args,
      input);
}

// Every file under `dir`, relative path → bytes.
std::vector<std::pair<std::string, std::string>> tree(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      out.emplace_back(fs::relative(e.path(), dir).string(),
                       gpuadmit::testing::slurp(e.path().string()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The same lint with --jobs 1 and --jobs 4: identical standard output, standard error and exit
// code. Returns the one-thread run.
ProcessResult same_on_four_threads(const fs::path& dir, const std::string& args,
                                   const std::string& input = "") {
  const ProcessResult one = lint(dir, "--jobs 1 " + args, input);
  const ProcessResult four = lint(dir, "--jobs 4 " + args, input);
  INFO("gpuadmit lint " << args << " in " << dir.string());
  CHECK(four.err.find("ThreadSanitizer") == std::string::npos);
  CHECK(one.exit_code == four.exit_code);
  CHECK(one.err == four.err);
  CHECK(one.out == four.out);
  return one;
}

const char* const kFormats[] = {"text", "json", "sarif", "junit"};

}  // namespace

TEST_CASE("the corpus linted on 4 threads is byte for byte the one-thread output") {
  REQUIRE(fs::is_directory(kCorpus));
  for (const char* format : kFormats) {
    const ProcessResult r = same_on_four_threads(kCorpus, std::string("--output ") + format + " .");
    // The corpus holds one unreadable document (a PARSE error: exit code 2) beside workloads
    // the default policy reports on.
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("GPU023") != std::string::npos);
  }
  const ProcessResult fixed = same_on_four_threads(kCorpus, "--output json --fix .");
  CHECK(fixed.out.find("kind: ") != std::string::npos);
  CHECK(fixed.err.find("\"findings\"") != std::string::npos);
}

TEST_CASE("with --fix --write, 4 threads writes the same files as one thread") {
  const fs::path base =
      fs::temp_directory_path() / ("gpuadmit-lint-jobs-" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path one = base / "one", four = base / "four";
  const ProcessResult a = lint(kCorpus, "--jobs 1 --fix --write " + quoted(one.string()) + " .");
  const ProcessResult b = lint(kCorpus, "--jobs 4 --fix --write " + quoted(four.string()) + " .");
  CHECK(a.exit_code == b.exit_code);
  CHECK(a.out == b.out);
  CHECK(b.err.find("ThreadSanitizer") == std::string::npos);
  const auto written = tree(one);
  CHECK(written.size() > 100);
  CHECK(written == tree(four));
  fs::remove_all(base);
}

TEST_CASE("lint's golden cases on 4 threads match one thread in every format") {
  for (const auto& entry : fs::directory_iterator(kLintCases)) {
    const fs::path dir = entry.path();
    if (!fs::is_directory(dir / "input")) continue;
    const std::string policy =
        fs::exists(dir / "policy.yaml") ? "--policy policy.yaml " : std::string();
    for (const char* format : kFormats) {
      same_on_four_threads(dir, policy + "--output " + format + " input");
    }
    same_on_four_threads(dir, policy + "--output json --fix input");
    // Each file named on its own, twice over, with a missing path and standard input between
    // them: the files around stdin and errors keep their places.
    std::string files;
    for (const auto& f : fs::recursive_directory_iterator(dir / "input")) {
      if (f.is_regular_file()) files += quoted(fs::relative(f.path(), dir).string()) + " ";
    }
    same_on_four_threads(dir, policy + "--output text " + files + "no-such.yaml - " + files,
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                         "  - name: c\n    image: cuda\n    resources:\n      limits:\n"
                         "        nvidia.com/gpu: 1\n");
  }
}

TEST_CASE("the number of --jobs is from 1 to 1024, else a usage error") {
  for (const std::string bad : {"0", "-1", "two", "1025", ""}) {
    const ProcessResult r = lint(kLintCases, "--jobs '" + bad + "' .");
    INFO("--jobs '" << bad << "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "gpuadmit lint: --jobs must be a number from 1 to 1024, not \"" + bad + "\"\n");
  }
}
}  // namespace jobs_test
