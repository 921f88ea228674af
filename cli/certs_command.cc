#include <iostream>

#include "cli/commands.h"

namespace gpuadmit::cli {

int certs_command(const std::vector<std::string>&) {
  std::cerr << "gpuadmit certs: not built yet\n";
  return 2;
}

}  // namespace gpuadmit::cli
