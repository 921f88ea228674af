#pragma once
// How to reach the Kubernetes API as kubectl would, for read-only clients (`gpuadmit fleet
// --live` without an export): a kubeconfig's current context, or the in-cluster configuration.
//
//   auto access = resolve_cluster_access({.kubeconfig = flag, .context = ctx_flag});
//   if (auto* error = std::get_if<std::string>(&access)) ...   // one line, says what to fix
//   ClusterAccess& a = std::get<ClusterAccess>(access);
//   ApiClient api(a.endpoint, a.identity);  api.get(a.path_prefix + "/api/v1/nodes", a.token)
//
// Which configuration (client-go clientcmd's loading rules, then rest.InClusterConfig as kubectl
// falls back to it): --kubeconfig FILE; else $KUBECONFIG, a ':'-separated list of files merged
// (for clusters, contexts and users the first file naming one wins; current-context is the
// first file's that sets one); else ~/.kube/config when it exists; else the in-cluster
// configuration (KUBERNETES_SERVICE_HOST/PORT, the service account token and CA).
//
// Supported in a kubeconfig: server (https://host[:port][/path]), certificate-authority(-data),
// token, tokenFile, client-certificate(-data) with client-key(-data); relative file names are
// resolved against the kubeconfig's folder. Not supported, each a clear error naming what to use
// instead: exec credential plugins, auth-provider, username/password, insecure-skip-tls-verify,
// tls-server-name, proxy-url, plain http.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kube/api_client.h"

namespace gpuadmit::kube {

struct AccessOptions {
  std::string kubeconfig;                    // --kubeconfig; "" to use the loading rules
  std::string context;                       // --context; "" for the current context
  std::chrono::milliseconds timeout{10000};  // per connect, read and write
  // Environment and home folder, for tests; unset: the process's.
  const char* kubeconfig_env = nullptr;  // $KUBECONFIG
  const char* home = nullptr;            // $HOME
  bool use_process_env = true;
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

struct ClusterAccess {
  ApiEndpoint endpoint;
  ClientIdentity identity;
  std::string token;        // bearer token; "" when none
  std::string path_prefix;  // the server URL's path ("/k8s/clusters/c-m4x2"); "" for most
  std::string source;       // "in-cluster" or "kubeconfig ~/.kube/config, context kind-ml"
  std::string server;       // "https://10.0.0.1:6443"
  // certificate-authority-data is written to a private temporary file for the TLS client;
  // removed when the last copy of this access goes.
  std::shared_ptr<const std::string> ca_file;
};

std::variant<ClusterAccess, std::string> resolve_cluster_access(const AccessOptions& options);

// Standard base64 (RFC 4648 §4, padding optional, whitespace ignored), as a kubeconfig's *-data
// fields are written; nullopt when it is not base64.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace gpuadmit::kube
