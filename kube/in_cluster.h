#pragma once
// Where and as whom gpuadmit reaches the Kubernetes API from inside its pod, as client-go's
// rest.InClusterConfig does: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the service
// account's token (read again before every request: the kubelet rotates projected tokens about
// hourly) and the cluster CA. Shared by every reader of the API in kube/.
//
//   auto access = InClusterAccess::from_environment();     // or an error string
//   ApiClient api(std::get<InClusterAccess>(access).endpoint(timeout));
//   auto token = read_token(access.token_path);

#include <chrono>
#include <optional>
#include <string>
#include <variant>

#include "kube/api_client.h"

namespace gpuadmit::kube {

struct InClusterAccess {
  static constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

  std::string host;  // KUBERNETES_SERVICE_HOST
  int port = 443;    // KUBERNETES_SERVICE_PORT
  std::string token_path = std::string(kServiceAccountDir) + "/token";
  std::string ca_path = std::string(kServiceAccountDir) + "/ca.crt";

  // An error (one line) when not running in a pod. GPUADMIT_SERVICE_ACCOUNT_DIR, when set, is
  // read instead of kServiceAccountDir (tests; a serve run outside a pod with a token of its own).
  static std::variant<InClusterAccess, std::string> from_environment();
  ApiEndpoint endpoint(std::chrono::milliseconds timeout) const {
    return {host, port, ca_path, timeout};
  }
};

// The token as the file holds it, without the trailing newline some tools write; nullopt when
// it cannot be read.
std::optional<std::string> read_token(const std::string& path);

// "the API server answered 403 (Forbidden): <Status.message>", from the API server's `Status`
// body when it sent one (apimachinery metav1.Status: kind Status, reason, message, code).
std::string describe_answer(const ApiResponse& r);

}  // namespace gpuadmit::kube
