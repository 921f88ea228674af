#include "kube/kubeconfig.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

#include "engine/json.h"
#include "kube/kube_claim_resolver.h"
#include "yaml/reader.h"

namespace gpuadmit::kube {
namespace {

using Result = std::variant<ClusterAccess, std::string>;

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

// clientcmd ResolvePaths: a relative file name is relative to the kubeconfig that names it.
std::string resolve(const std::string& file, const std::string& folder) {
  return file.empty() || file[0] == '/' ? file : folder + "/" + file;
}

std::string trim_token(std::string token) {
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  return token;
}

// One kubeconfig file, parsed (YAML or JSON, with lint's reader).
struct File {
  std::string path;
  Json doc;
};

std::variant<File, std::string> load_file(const std::string& path) {
  const std::optional<std::string> text = read_file(path);
  if (!text) return "cannot read the kubeconfig " + path + "; check the path";
  yaml::DocumentStream stream{std::string_view(*text)};
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument doc = yaml::parse_document(source, false);
    if (doc.empty) continue;
    if (doc.error) {
      return path + ":" + std::to_string(doc.error->line) +
             ": the kubeconfig is not valid YAML: " + doc.error->message;
    }
    if (!doc.value.is_object()) return path + ": the kubeconfig is not a YAML mapping";
    return File{path, std::move(doc.value)};
  }
  return File{path, Json::object()};  // an empty file: nothing set
}

// The entry named `name` in a file's list (clusters, contexts, users), or nullptr.
const Json* named(const Json& doc, std::string_view list, std::string_view member,
                  std::string_view name) {
  const Json* entries = find_member(doc, list);
  if (entries == nullptr || !entries->is_array()) return nullptr;
  for (const Json& e : *entries) {
    if (string_member(e, "name") == name) return find_member(e, member);
  }
  return nullptr;
}

// The first file that names the entry wins (clientcmd merging); its folder resolves paths.
struct Found {
  const Json* entry = nullptr;
  std::string folder;
};
Found first_named(const std::vector<File>& files, std::string_view list, std::string_view member,
                  std::string_view name) {
  for (const File& f : files) {
    if (const Json* e = named(f.doc, list, member, name)) return {e, folder_of(f.path)};
  }
  return {};
}

bool truthy(const Json& object, std::string_view key) {
  const Json* v = find_member(object, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

// https://host[:port][/path]: host, port (443 by default) and the path the API is under.
std::optional<std::string> parse_server(const std::string& server, ClusterAccess& out) {
  constexpr std::string_view kHttps = "https://";
  if (server.rfind("http://", 0) == 0) {
    return "the server " + server + " is plain http: not supported (gpuadmit speaks HTTPS only)";
  }
  if (server.rfind(kHttps, 0) != 0) return "the server \"" + server + "\" is not an https:// URL";
  std::string rest = server.substr(kHttps.size());
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  out.path_prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!out.path_prefix.empty() && out.path_prefix.back() == '/') out.path_prefix.pop_back();
  out.endpoint.port = 443;
  std::string port;
  if (!authority.empty() && authority[0] == '[') {  // [::1]:6443
    const size_t close = authority.find(']');
    if (close == std::string::npos) return "the server " + server + " has a malformed IPv6 host";
    out.endpoint.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      port = authority.substr(close + 2);
  } else {
    const size_t colon = authority.rfind(':');
    out.endpoint.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (!port.empty()) {
    char* end = nullptr;
    const long value = std::strtol(port.c_str(), &end, 10);
    if (*end != '\0' || value < 1 || value > 65535)
      return "the server " + server + " has no valid port";
    out.endpoint.port = static_cast<int>(value);
  }
  if (out.endpoint.host.empty()) return "the server " + server + " names no host";
  return std::nullopt;
}

// A kubeconfig field given as a file name (`field`) or base64 (`field`-data, which wins).
struct Material {
  bool set = false;
  std::string value;
  std::string error;
};
Material material(const Json& object, const std::string& field, const std::string& folder) {
  Material m;
  const std::string_view data = string_member(object, field + "-data");
  const std::string_view file = string_member(object, field);
  m.set = !data.empty() || !file.empty();
  if (!data.empty()) {
    std::optional<std::string> decoded = decode_base64(data);
    if (!decoded) m.error = field + "-data is not base64";
    m.value = decoded.value_or("");
  } else if (!file.empty()) {
    const std::string path = resolve(std::string(file), folder);
    std::optional<std::string> text = read_file(path);
    if (!text) m.error = "cannot read " + field + " " + path;
    m.value = text.value_or("");
  }
  return m;
}

// The CA bundle as a private temporary file for the TLS client (which loads CAs from a file).
std::optional<std::string> write_ca_file(const std::string& pem) {
  const char* dir = std::getenv("TMPDIR");
  std::string name =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/gpuadmit-kube-ca-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return std::nullopt;
  const bool ok = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
  ::close(fd);
  if (!ok) {
    ::unlink(name.c_str());
    return std::nullopt;
  }
  return name;
}

// The certificate and key parse and belong together (a clear error now, not a TLS failure later).
std::optional<std::string> check_identity(const ClientIdentity& identity) {
  BIO* cert_bio =
      BIO_new_mem_buf(identity.cert_pem.data(), static_cast<int>(identity.cert_pem.size()));
  BIO* key_bio =
      BIO_new_mem_buf(identity.key_pem.data(), static_cast<int>(identity.key_pem.size()));
  X509* cert = cert_bio ? PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr) : nullptr;
  EVP_PKEY* key = key_bio ? PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr) : nullptr;
  std::optional<std::string> error;
  if (cert == nullptr) {
    error = "the client certificate is not a PEM certificate";
  } else if (key == nullptr) {
    error = "the client key is not a PEM private key";
  } else if (X509_check_private_key(cert, key) != 1) {
    error = "the client key does not belong to the client certificate";
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cert_bio);
  BIO_free(key_bio);
  return error;
}

std::optional<std::string> unsupported_user(const Json& user, const std::string& name) {
  const std::string who = "the user \"" + name + "\" ";
  const std::string instead =
      ": not supported by gpuadmit; give the user a token (kubectl create token SERVICE_ACCOUNT) "
      "or a client certificate, or run gpuadmit in the cluster";
  if (const Json* exec = find_member(user, "exec"); exec != nullptr && !exec->is_null()) {
    return who + "authenticates with an exec credential plugin (" +
           std::string(string_member(*exec, "command")) + ")" + instead;
  }
  if (const Json* p = find_member(user, "auth-provider"); p != nullptr && !p->is_null()) {
    return who + "authenticates with the auth-provider " + std::string(string_member(*p, "name")) +
           instead;
  }
  if (!string_member(user, "username").empty() || !string_member(user, "password").empty()) {
    return who + "authenticates with a username and password" + instead;
  }
  return std::nullopt;
}

std::optional<std::string> read_cluster(const Found& cluster, const std::string& name,
                                        ClusterAccess& out) {
  const Json& c = *cluster.entry;
  const std::string who = "the cluster \"" + name + "\"";
  if (truthy(c, "insecure-skip-tls-verify")) {
    return who +
           " sets insecure-skip-tls-verify: not supported (gpuadmit verifies the API "
           "server); give certificate-authority or certificate-authority-data";
  }
  if (!string_member(c, "tls-server-name").empty()) {
    return who +
           " sets tls-server-name: not supported; use a server URL whose host the "
           "certificate names";
  }
  if (!string_member(c, "proxy-url").empty()) return who + " sets proxy-url: not supported";
  out.server = std::string(string_member(c, "server"));
  if (out.server.empty()) return who + " has no server";
  if (auto error = parse_server(out.server, out)) return who + ": " + *error;
  const Material ca = material(c, "certificate-authority", cluster.folder);
  if (!ca.error.empty()) return who + ": " + ca.error;
  if (const std::string_view file = string_member(c, "certificate-authority");
      !file.empty() && string_member(c, "certificate-authority-data").empty()) {
    out.endpoint.ca_path = resolve(std::string(file), cluster.folder);  // read by the TLS client
  } else if (ca.set) {
    const std::optional<std::string> file = write_ca_file(ca.value);
    if (!file) return "cannot write the cluster's CA to a temporary file";
    out.ca_file =
        std::shared_ptr<const std::string>(new std::string(*file), [](const std::string* p) {
          ::unlink(p->c_str());
          delete p;
        });
    out.endpoint.ca_path = *file;
  }
  return std::nullopt;
}

std::optional<std::string> read_user(const Found& user, const std::string& name,
                                     ClusterAccess& out) {
  if (user.entry == nullptr) return std::nullopt;  // no credentials: anonymous
  const Json& u = *user.entry;
  if (auto error = unsupported_user(u, name)) return error;
  out.token = std::string(string_member(u, "token"));
  // rest.Config: the token file, when set, takes precedence over the token.
  if (const std::string_view file = string_member(u, "tokenFile"); !file.empty()) {
    const std::string path = resolve(std::string(file), user.folder);
    const std::optional<std::string> token = read_file(path);
    if (!token) return "the user \"" + name + "\": cannot read tokenFile " + path;
    out.token = trim_token(*token);
  }
  const Material cert = material(u, "client-certificate", user.folder);
  const Material key = material(u, "client-key", user.folder);
  if (!cert.error.empty()) return "the user \"" + name + "\": " + cert.error;
  if (!key.error.empty()) return "the user \"" + name + "\": " + key.error;
  if (cert.set != key.set) {
    return "the user \"" + name + "\" has a client " + (cert.set ? "certificate" : "key") +
           " without its " + (cert.set ? "key" : "certificate");
  }
  if (cert.set) {
    out.identity = {cert.value, key.value};
    if (auto error = check_identity(out.identity)) return "the user \"" + name + "\": " + *error;
  }
  return std::nullopt;
}

Result from_kubeconfig(const std::vector<std::string>& paths, const AccessOptions& options) {
  std::vector<File> files;
  for (const std::string& path : paths) {
    auto loaded = load_file(path);
    if (auto* error = std::get_if<std::string>(&loaded)) return *error;
    files.push_back(std::move(std::get<File>(loaded)));
  }
  std::string context = options.context;
  for (const File& f : files) {
    if (!context.empty()) break;
    context = std::string(string_member(f.doc, "current-context"));
  }
  if (context.empty()) return "the kubeconfig sets no current-context; pass --context NAME";
  const Found ctx = first_named(files, "contexts", "context", context);
  if (ctx.entry == nullptr) return "the context \"" + context + "\" is not in the kubeconfig";
  const std::string cluster_name(string_member(*ctx.entry, "cluster"));
  const std::string user_name(string_member(*ctx.entry, "user"));
  const Found cluster = first_named(files, "clusters", "cluster", cluster_name);
  if (cluster.entry == nullptr) {
    return "the context \"" + context + "\" names the cluster \"" + cluster_name +
           "\", which the kubeconfig does not define";
  }
  const Found user = first_named(files, "users", "user", user_name);
  if (!user_name.empty() && user.entry == nullptr) {
    return "the context \"" + context + "\" names the user \"" + user_name +
           "\", which the kubeconfig does not define";
  }
  ClusterAccess access;
  access.endpoint.timeout = options.timeout;
  if (auto error = read_cluster(cluster, cluster_name, access)) return *error;
  if (auto error = read_user(user, user_name, access)) return *error;
  std::string list;
  for (const std::string& p : paths) list += (list.empty() ? "" : ":") + p;
  access.source = "kubeconfig " + list + ", context " + context;
  return access;
}

Result in_cluster(const AccessOptions& options) {
  // The webhook's DRA lookup reads the same environment (rest.InClusterConfig).
  auto config = KubeClaimResolverConfig::in_cluster();
  if (auto* error = std::get_if<std::string>(&config)) {
    return "no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and " + *error;
  }
  const KubeClaimResolverConfig& c = std::get<KubeClaimResolverConfig>(config);
  ClusterAccess access;
  access.endpoint.host = c.host;
  access.endpoint.port = c.port;
  access.endpoint.ca_path = options.service_account_dir + "/ca.crt";
  access.endpoint.timeout = options.timeout;
  const std::optional<std::string> token = read_file(options.service_account_dir + "/token");
  if (!token) {
    return "running in a pod, but the service account token " + options.service_account_dir +
           "/token cannot be read (automountServiceAccountToken: false?)";
  }
  access.token = trim_token(*token);
  const bool ipv6 = c.host.find(':') != std::string::npos;
  access.server = "https://" + (ipv6 ? "[" + c.host + "]" : c.host) + ":" + std::to_string(c.port);
  access.source = "in-cluster";
  return access;
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  size_t padding = 0;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int v = value(c);
    if (v < 0 || padding > 0) return std::nullopt;  // a stray byte, or data after padding
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out += static_cast<char>((bits >> 16) & 0xFF);
      out += static_cast<char>((bits >> 8) & 0xFF);
      out += static_cast<char>(bits & 0xFF);
      bits = 0;
      count = 0;
    }
  }
  if (count == 1 || padding > 2) return std::nullopt;
  if (count == 2) out += static_cast<char>((bits >> 4) & 0xFF);
  if (count == 3) {
    out += static_cast<char>((bits >> 10) & 0xFF);
    out += static_cast<char>((bits >> 2) & 0xFF);
  }
  return out;
}

std::variant<ClusterAccess, std::string> resolve_cluster_access(const AccessOptions& options) {
  if (!options.kubeconfig.empty()) return from_kubeconfig({options.kubeconfig}, options);
  const char* env = options.use_process_env ? std::getenv("KUBECONFIG") : options.kubeconfig_env;
  if (env != nullptr && *env != '\0') {
    std::vector<std::string> paths;
    std::string list(env);
    for (size_t start = 0; start <= list.size();) {
      const size_t colon = list.find(':', start);
      const std::string path =
          list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      // clientcmd skips files of $KUBECONFIG that do not exist.
      if (!path.empty() && exists(path)) paths.push_back(path);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (!paths.empty()) return from_kubeconfig(paths, options);
  }
  const char* home = options.use_process_env ? std::getenv("HOME") : options.home;
  if (home != nullptr && *home != '\0') {
    const std::string path = std::string(home) + "/.kube/config";
    if (exists(path)) return from_kubeconfig({path}, options);
  }
  return in_cluster(options);
}

}  // namespace gpuadmit::kube
