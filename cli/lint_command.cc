#include <iostream>

#include "cli/commands.h"

namespace gpuadmit::cli {

int lint_command(const std::vector<std::string>&) {
  std::cerr << "gpuadmit lint: not built yet\n";
  return 2;
}

}  // namespace gpuadmit::cli
