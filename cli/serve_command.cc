#include <iostream>

#include "cli/commands.h"

namespace gpuadmit::cli {

int serve_command(const std::vector<std::string>&) {
  std::cerr << "gpuadmit serve: not built yet\n";
  return 2;
}

}  // namespace gpuadmit::cli
