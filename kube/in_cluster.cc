#include "kube/in_cluster.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "engine/json.h"

namespace gpuadmit::kube {

std::variant<InClusterAccess, std::string> InClusterAccess::from_environment() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return std::string(
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a pod");
  }
  InClusterAccess access;
  access.host = host;
  char* end = nullptr;
  const long value = std::strtol(port, &end, 10);
  if (*end != '\0' || value < 1 || value > 65535) {
    return "KUBERNETES_SERVICE_PORT is not a port: \"" + std::string(port) + "\"";
  }
  access.port = static_cast<int>(value);
  if (const char* dir = std::getenv("GPUADMIT_SERVICE_ACCOUNT_DIR"); dir != nullptr && *dir) {
    access.token_path = std::string(dir) + "/token";
    access.ca_path = std::string(dir) + "/ca.crt";
  }
  return access;
}

std::optional<std::string> read_token(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  return token;
}

std::string describe_answer(const ApiResponse& r) {
  std::string text = "the API server answered " + std::to_string(r.status);
  const Json status = Json::parse(r.body, nullptr, false);
  if (string_member(status, "kind") == "Status") {
    if (auto reason = string_member(status, "reason"); !reason.empty())
      text += " (" + std::string(reason) + ")";
    if (auto message = string_member(status, "message"); !message.empty())
      text += ": " + std::string(message);
  }
  return text;
}

}  // namespace gpuadmit::kube
