// kube/kubeconfig.h: which configuration (client-go's loading rules), what a kubeconfig's
// current context gives (server, CA, token, client certificate), merging $KUBECONFIG files,
// the in-cluster configuration, and each unsupported form refused with what to use instead.

#include <catch2/catch.hpp>

#include <cstdlib>

#include "certs/certs.h"
#include "kube/kubeconfig.h"
#include "tests/kube/fake_list_server.h"

namespace gpuadmit::kube {
namespace kubeconfig_test {
namespace {

using testing::TempDir;

std::variant<ClusterAccess, std::string> resolve_in(const std::string& kubeconfig,
                                                    const std::string& context = "",
                                                    const char* env = nullptr,
                                                    const char* home = "/nonexistent") {
  AccessOptions options;
  options.kubeconfig = kubeconfig;
  options.context = context;
  options.use_process_env = false;
  options.kubeconfig_env = env;
  options.home = home;
  return resolve_cluster_access(options);
}

std::string error_of(const std::variant<ClusterAccess, std::string>& r) {
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(no error)";
}

// kind's kubeconfig shape: CA and client certificate as *-data.
std::string kind_config(const testing::TestPki& pki, const std::string& extra_user = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: kind-ml\nclusters:\n- name: kind-ml\n"
         "  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority-data: " +
         certs::base64(pki.ca.cert_pem) +
         "\ncontexts:\n- name: kind-ml\n  context: {cluster: kind-ml, user: kind-ml}\n"
         "users:\n- name: kind-ml\n  user:\n    client-certificate-data: " +
         certs::base64(pki.client.cert_pem) +
         "\n    client-key-data: " + certs::base64(pki.client.key_pem) + "\n" + extra_user;
}

TEST_CASE("kubeconfig: the current context's server, CA data and client certificate") {
  TempDir dir;
  const testing::TestPki pki(dir.path());
  const std::string path = dir.write("config", kind_config(pki));
  const auto r = resolve_in(path);
  REQUIRE(std::holds_alternative<ClusterAccess>(r));
  const ClusterAccess& a = std::get<ClusterAccess>(r);
  CHECK(a.endpoint.host == "127.0.0.1");
  CHECK(a.endpoint.port == 6443);
  CHECK(a.path_prefix == "");
  CHECK(a.server == "https://127.0.0.1:6443");
  CHECK(a.source == "kubeconfig " + path + ", context kind-ml");
  CHECK(a.token == "");
  CHECK(a.identity.cert_pem == pki.client.cert_pem);
  CHECK(a.identity.key_pem == pki.client.key_pem);
  // The CA data is written to a private temporary file for the TLS client, gone with the access.
  REQUIRE(a.ca_file != nullptr);
  CHECK(a.endpoint.ca_path == *a.ca_file);
  CHECK(testing::read_text(a.endpoint.ca_path) == pki.ca.cert_pem);
  const std::string ca_path = a.endpoint.ca_path;
  { auto copy = std::get<ClusterAccess>(r); }
  CHECK(std::filesystem::exists(ca_path));  // a copy going does not remove it
}

TEST_CASE("kubeconfig: files, tokenFile and a path prefix, relative to the kubeconfig") {
  TempDir dir;
  const testing::TestPki pki(dir.path());
  std::filesystem::create_directories(dir.path() + "/kube");
  dir.write("kube/token", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n");
  const std::string path = dir.write(
      "kube/config",
      "apiVersion: v1\nkind: Config\ncurrent-context: rancher\nclusters:\n- name: c\n  cluster:\n"
      "    server: https://[::1]:8443/k8s/clusters/c-m4x2/\n    certificate-authority: ../ca.crt\n"
      "contexts:\n- name: rancher\n  context: {cluster: c, user: u, namespace: ml}\n"
      "users:\n- name: u\n  user: {token: ignored, tokenFile: token}\n");
  const auto r = resolve_in(path);
  REQUIRE(std::holds_alternative<ClusterAccess>(r));
  const ClusterAccess& a = std::get<ClusterAccess>(r);
  CHECK(a.endpoint.host == "::1");
  CHECK(a.endpoint.port == 8443);
  CHECK(a.path_prefix == "/k8s/clusters/c-m4x2");
  CHECK(a.endpoint.ca_path == dir.path() + "/kube/../ca.crt");
  CHECK(a.token == "eyJhbGciOiJSUzI1NiJ9.e30.c2ln");  // tokenFile wins over token (rest.Config)
  CHECK(a.identity.cert_pem.empty());
  CHECK(a.ca_file == nullptr);
}

TEST_CASE("kubeconfig: $KUBECONFIG files merged, the first to name a thing wins") {
  TempDir dir;
  const std::string first = dir.write("a",
                                      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  "
                                      "cluster: {server: 'https://first:443'}\n"
                                      "users:\n- name: u\n  user: {token: from-a}\n");
  const std::string second = dir.write(
      "b",
      "apiVersion: v1\nkind: Config\ncurrent-context: prod\nclusters:\n- name: c\n"
      "  cluster: {server: 'https://second:443'}\n- name: d\n  cluster: {server: 'https://d'}\n"
      "contexts:\n- name: prod\n  context: {cluster: c, user: u}\n- name: dev\n"
      "  context: {cluster: d, user: u}\n");
  const std::string env = first + ":" + dir.path() + "/missing:" + second;
  const auto r = resolve_in("", "", env.c_str());
  REQUIRE(std::holds_alternative<ClusterAccess>(r));
  CHECK(std::get<ClusterAccess>(r).endpoint.host == "first");  // cluster c: the first file's
  CHECK(std::get<ClusterAccess>(r).token == "from-a");
  CHECK(std::get<ClusterAccess>(r).source ==
        "kubeconfig " + first + ":" + second + ", context prod");
  const auto dev = resolve_in("", "dev", env.c_str());
  REQUIRE(std::holds_alternative<ClusterAccess>(dev));
  CHECK(std::get<ClusterAccess>(dev).endpoint.host == "d");
  CHECK(std::get<ClusterAccess>(dev).endpoint.port == 443);
}

TEST_CASE("kubeconfig: ~/.kube/config when nothing else is named") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/.kube");
  dir.write(".kube/config",
            "apiVersion: v1\ncurrent-context: x\nclusters: [{name: c, cluster: {server: "
            "'https://h:6443'}}]\n"
            "contexts: [{name: x, context: {cluster: c}}]\n");
  const auto r = resolve_in("", "", nullptr, dir.path().c_str());
  REQUIRE(std::holds_alternative<ClusterAccess>(r));
  CHECK(std::get<ClusterAccess>(r).endpoint.host == "h");
  CHECK(std::get<ClusterAccess>(r).token == "");  // no user: no credentials
}

TEST_CASE("kubeconfig: what cannot be used is refused, saying what to use instead") {
  TempDir dir;
  const testing::TestPki pki(dir.path());
  struct Case {
    std::string config;
    std::string context;
    std::string error;
  };
  const std::string head = "apiVersion: v1\nkind: Config\ncurrent-context: x\n";
  const std::string contexts = "contexts:\n- name: x\n  context: {cluster: c, user: u}\n";
  const std::string cluster = "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n";
  const Case cases[] = {
      {head + cluster + contexts +
           "users:\n- name: u\n  user:\n    exec:\n      apiVersion: "
           "client.authentication.k8s.io/v1\n"
           "      command: aws\n      args: [eks, get-token]\n",
       "",
       "the user \"u\" authenticates with an exec credential plugin (aws): not supported by "
       "gpuadmit; give the user a token (kubectl create token SERVICE_ACCOUNT) or a client "
       "certificate, or run gpuadmit in the cluster"},
      {head + cluster + contexts + "users:\n- name: u\n  user: {auth-provider: {name: gcp}}\n", "",
       "the user \"u\" authenticates with the auth-provider gcp: not supported by gpuadmit; give "
       "the user a token (kubectl create token SERVICE_ACCOUNT) or a client certificate, or run "
       "gpuadmit in the cluster"},
      {head + cluster + contexts + "users:\n- name: u\n  user: {username: admin, password: x}\n",
       "",
       "the user \"u\" authenticates with a username and password: not supported by gpuadmit; "
       "give the user a token (kubectl create token SERVICE_ACCOUNT) or a client certificate, or "
       "run gpuadmit in the cluster"},
      {head +
           "clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: "
           "true}\n" +
           contexts + "users: [{name: u, user: {token: t}}]\n",
       "",
       "the cluster \"c\" sets insecure-skip-tls-verify: not supported (gpuadmit verifies the "
       "API server); give certificate-authority or certificate-authority-data"},
      {head + "clusters:\n- name: c\n  cluster: {server: 'http://localhost:8080'}\n" + contexts +
           "users: [{name: u, user: {token: t}}]\n",
       "",
       "the cluster \"c\": the server http://localhost:8080 is plain http: not supported "
       "(gpuadmit speaks HTTPS only)"},
      {head +
           "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority-data: "
           "'%%%'}\n" +
           contexts + "users: [{name: u, user: {token: t}}]\n",
       "", "the cluster \"c\": certificate-authority-data is not base64"},
      {head + cluster + contexts + "users:\n- name: u\n  user: {client-certificate: " + dir.path() +
           "/client.crt}\n",
       "", "the user \"u\" has a client certificate without its key"},
      {head + cluster + contexts + "users:\n- name: u\n  user: {client-certificate: " + dir.path() +
           "/client.crt, client-key: " + dir.path() + "/tls.key}\n",
       "", "the user \"u\": the client key does not belong to the client certificate"},
      {head + cluster + contexts + "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n",
       "", "the user \"u\": cannot read tokenFile /nonexistent/token"},
      {"apiVersion: v1\nkind: Config\n" + cluster + contexts, "",
       "the kubeconfig sets no current-context; pass --context NAME"},
      {head + cluster + contexts, "y", "the context \"y\" is not in the kubeconfig"},
      {head + contexts, "",
       "the context \"x\" names the cluster \"c\", which the kubeconfig does not define"},
      {head + cluster + contexts, "",
       "the context \"x\" names the user \"u\", which the kubeconfig does not define"},
      {"apiVersion: v1\nkind: {a: Config}}\n", "",
       "config:2: the kubeconfig is not valid YAML: illegal flow end"},
  };
  for (const Case& c : cases) {
    INFO(c.config);
    const std::string path = dir.write("config", c.config);
    const std::string error = error_of(resolve_in(path, c.context));
    if (c.error.rfind("config:", 0) == 0) {
      CHECK(error == dir.path() + "/" + c.error);
    } else {
      CHECK(error == c.error);
    }
  }
  CHECK(error_of(resolve_in(dir.path() + "/none")) ==
        "cannot read the kubeconfig " + dir.path() + "/none; check the path");
}

TEST_CASE("kubeconfig: in the cluster, the service account's token and CA") {
  TempDir dir;
  dir.write("token", "service-account-token\n");
  dir.write("ca.crt", "PEM");
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  AccessOptions options;
  options.use_process_env = false;  // no $KUBECONFIG, no home: the loading rules find nothing
  options.service_account_dir = dir.path();
  const auto r = resolve_cluster_access(options);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  REQUIRE(std::holds_alternative<ClusterAccess>(r));
  const ClusterAccess& a = std::get<ClusterAccess>(r);
  CHECK(a.endpoint.host == "10.96.0.1");
  CHECK(a.endpoint.port == 443);
  CHECK(a.endpoint.ca_path == dir.path() + "/ca.crt");
  CHECK(a.token == "service-account-token");
  CHECK(a.source == "in-cluster");
  CHECK(error_of(resolve_cluster_access(options)) ==
        "no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and KUBERNETES_SERVICE_HOST "
        "and KUBERNETES_SERVICE_PORT are not set: not running in a pod");
}

TEST_CASE("kubeconfig: base64 as kubeconfig data fields hold it") {
  CHECK(decode_base64("aGVsbG8=") == "hello");
  CHECK(decode_base64("aGVsbG8") == "hello");
  CHECK(decode_base64("aGVs\nbG8=\n") == "hello");
  CHECK(decode_base64("") == "");
  CHECK_FALSE(decode_base64("aGVsbG8=x"));
  CHECK_FALSE(decode_base64("a"));
  CHECK_FALSE(decode_base64("aGV*"));
}

}  // namespace
}  // namespace kubeconfig_test
}  // namespace gpuadmit::kube
