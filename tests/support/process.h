#pragma once
// Test-only: run a command through /bin/sh with the given standard input; capture its standard
// output, standard error and exit code.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuadmit::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline ProcessResult run_command(const std::string& command, const std::string& input = "") {
  char dir_template[] = "/tmp/gpuadmit-test-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string in_path = dir + "/stdin", out_path = dir + "/stdout", err_path = dir + "/stderr";
  {
    std::ofstream in(in_path, std::ios::binary);
    in << input;
  }
  const std::string full = "(" + command + ") <" + in_path + " >" + out_path + " 2>" + err_path;
  const int status = std::system(full.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(in_path.c_str());
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  rmdir(dir.c_str());
  return r;
}

}  // namespace gpuadmit::testing
