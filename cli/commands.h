#pragma once
// One function per subcommand, each in cli/<name>_command.cc. `argv` excludes the subcommand.
// Each returns the process exit code: 0 success, 1 deny-level findings, 2 usage/input errors.

#include <string>
#include <vector>

namespace gpuadmit::cli {

int policy_command(const std::vector<std::string>& argv);  // policy check P
int review_command(const std::vector<std::string>& argv);  // review --policy P [--endpoint]
int serve_command(const std::vector<std::string>& argv);   // serve ...
int certs_command(const std::vector<std::string>& argv);   // certs ...
int lint_command(const std::vector<std::string>& argv);    // lint ...
int render_command(const std::vector<std::string>& argv);  // render ...
int test_command(const std::vector<std::string>& argv);    // test [-v] [--output] PATH...

}  // namespace gpuadmit::cli
