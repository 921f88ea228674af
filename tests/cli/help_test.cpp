// The command line's conventions: every command answers -h/--help on stdout with exit 0, and
// --version names the version and the libraries it was built with.

#include <catch2/catch.hpp>

#include <string>

#include "tests/support/process.h"

namespace gpuadmit {
namespace help_test {
namespace {

const std::string kBinary = GPUADMIT_BINARY;

TEST_CASE("help: every command answers -h and --help with its usage on stdout, exit 0") {
  struct Case {
    std::string command;
    std::string usage_start;
  };
  const Case cases[] = {
      {"serve", "usage: gpuadmit serve "},
      {"register", "usage: gpuadmit register "},
      {"lint", "usage: gpuadmit lint "},
      {"review", "usage: gpuadmit review "},
      {"policy", "usage: gpuadmit policy check "},
      {"policy check", "usage: gpuadmit policy check "},
      {"certs", "usage: gpuadmit certs "},
      {"render", "usage: gpuadmit render "},
      {"test", "usage: gpuadmit test "},
      {"fleet", "usage: gpuadmit fleet "},
  };
  for (const Case& c : cases) {
    for (const char* flag : {"-h", "--help"}) {
      INFO(c.command << " " << flag);
      auto r = testing::run_command(kBinary + " " + c.command + " " + flag);
      CHECK(r.exit_code == 0);
      CHECK(r.err == "");
      CHECK(r.out.rfind(c.usage_start, 0) == 0);
      CHECK(r.out.back() == '\n');
    }
  }
  // Help wins over the rest of the line; after "--" a "-h" is a path.
  auto help = testing::run_command(kBinary + " lint --output json --help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.rfind("usage: gpuadmit lint ", 0) == 0);
  auto path = testing::run_command(kBinary + " lint -- -h");
  CHECK(path.exit_code == 2);
  CHECK(path.out.find("-h\n  1:  error  PARSE  no such file or folder") != std::string::npos);
}

TEST_CASE("help: a usage error ends its message and the usage with a newline, exit 2") {
  for (const char* line :
       {"serve --bogus", "register --bogus", "lint --bogus", "review --bogus", "certs --bogus",
        "policy check --bogus", "render --bogus", "test --bogus", "fleet --bogus"}) {
    INFO(line);
    auto r = testing::run_command(kBinary + " " + std::string(line));
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(r.err.find(": unknown flag --bogus\nusage: gpuadmit ") != std::string::npos);
    CHECK(r.err.back() == '\n');
  }
}

TEST_CASE("help: --version prints the version and the libraries built with") {
  auto r = testing::run_command(kBinary + " --version");
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  CHECK(r.out.rfind("gpuadmit 0.1.0 (cpp-httplib 0.11.4, OpenSSL 3.", 0) == 0);
  CHECK(r.out.back() == '\n');
  auto top = testing::run_command(kBinary + " --help");
  CHECK(top.exit_code == 0);
  CHECK(top.out.rfind("usage: gpuadmit <command> [flags]", 0) == 0);
}

}  // namespace
}  // namespace help_test
}  // namespace gpuadmit
