#pragma once
// Test-only helpers for the webhook integration tests: a running `gpuadmit serve` process, and
// an OpenSSL client that connects to 127.0.0.1 but verifies the certificate for the service
// name (gpuadmit.<ns>.svc), as the API server does.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"

namespace gpuadmit::testing {

inline constexpr const char* kNamespace = "gpuadmit-system";
inline constexpr const char* kServiceName = "gpuadmit.gpuadmit-system.svc";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gpuadmit-webhook-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// Replaces a file the way an editor or ConfigMap update would be seen: write aside, rename over.
inline void replace_file(const std::string& path, const std::string& content) {
  write_file(path + ".new", content);
  std::filesystem::rename(path + ".new", path);
}

// `gpuadmit certs` into dir/ (ca.crt, tls.crt, tls.key).
inline void generate_certs(const std::string& dir) {
  auto r = run_command(std::string(GPUADMIT_BINARY) + " certs --service gpuadmit --namespace " +
                       kNamespace + " --out " + dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

struct HttpResponse {
  std::string raw;  // the response's bytes as sent: status line, headers, body
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A write to a connection the server has already refused (a rejected client certificate, a
// closed keep-alive) must fail with EPIPE, not kill the test with SIGPIPE: a killed test leaves
// its gpuadmit child holding ctest's output pipe, and ctest then waits for its timeout.
inline const bool kSigpipeIgnored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

// One TLS connection with HTTP/1.1 keep-alive.
class TlsClient {
 public:
  struct Options {
    std::string ca_path;
    std::string host = kServiceName;  // SNI and the name the certificate must carry
    std::string client_cert, client_key;
    int max_tls_version = 0;  // e.g. TLS1_1_VERSION to check it is refused
    int timeout_ms = 5000;
  };

  TlsClient() = default;
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;
  ~TlsClient() { close(); }

  // Returns an empty string on success, else what failed (including certificate errors).
  std::string connect(int port, const Options& options) {
    close();
    options_ = options;
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(ctx_, options.ca_path.c_str(), nullptr) != 1) {
      return "cannot load CA " + options.ca_path;
    }
    if (options.max_tls_version != 0) {
      SSL_CTX_set_min_proto_version(ctx_, TLS1_VERSION);
      SSL_CTX_set_max_proto_version(ctx_, options.max_tls_version);
      SSL_CTX_set_security_level(ctx_, 0);
    }
    if (!options.client_cert.empty() &&
        (SSL_CTX_use_certificate_chain_file(ctx_, options.client_cert.c_str()) != 1 ||
         SSL_CTX_use_PrivateKey_file(ctx_, options.client_key.c_str(), SSL_FILETYPE_PEM) != 1)) {
      return "cannot load client certificate";
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int yes = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    set_timeout(options.timeout_ms);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return "connect: " + std::string(strerror(errno));
    }
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, options.host.c_str());
    SSL_set1_host(ssl_, options.host.c_str());  // hostname verification, not just the chain
    if (SSL_connect(ssl_) != 1) {
      std::string error = "handshake failed";
      if (long v = SSL_get_verify_result(ssl_); v != X509_V_OK) {
        error += std::string(": ") + X509_verify_cert_error_string(v);
      }
      ERR_clear_error();
      return error;
    }
    return {};
  }

  void set_timeout(int ms) {
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }

  bool send_raw(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const int n = SSL_write(ssl_, bytes.data() + done, static_cast<int>(bytes.size() - done));
      if (n <= 0) {
        ERR_clear_error();
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // True when response bytes are waiting (used to stop sending a refused body, as Go does).
  bool readable(int timeout_ms = 0) {
    if (SSL_pending(ssl_) > 0) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) > 0;
  }

  // Reads one response (Content-Length framed). nullopt on EOF, error or timeout.
  std::optional<HttpResponse> read_response() {
    while (buffer_.find("\r\n\r\n") == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    const size_t head_end = buffer_.find("\r\n\r\n");
    std::istringstream head(buffer_.substr(0, head_end));
    HttpResponse r;
    std::string line;
    std::getline(head, line);
    if (line.rfind("HTTP/1.1 ", 0) != 0) return std::nullopt;
    r.status = std::stoi(line.substr(9, 3));
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers[name] = value;
    }
    const size_t length = r.headers.count("content-length")
                              ? static_cast<size_t>(std::stoull(r.headers["content-length"]))
                              : 0;
    const std::string head_bytes = buffer_.substr(0, head_end + 4);
    buffer_.erase(0, head_end + 4);
    while (buffer_.size() < length) {
      if (!fill()) return std::nullopt;
    }
    r.body = buffer_.substr(0, length);
    r.raw = head_bytes + r.body;
    buffer_.erase(0, length);
    return r;
  }

  std::optional<HttpResponse> request(const std::string& method, const std::string& path,
                                      const std::string& body = "",
                                      const std::string& extra_headers = "") {
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + options_.host + "\r\n";
    if (method == "POST") {
      req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n";
    }
    req += extra_headers + "\r\n" + body;
    if (!send_raw(req)) return std::nullopt;
    return read_response();
  }

  // True when the server has closed the connection (EOF or reset) within timeout_ms.
  bool closed_by_peer(int timeout_ms) {
    set_timeout(timeout_ms);
    char c;
    const int n = SSL_read(ssl_, &c, 1);
    const int err = SSL_get_error(ssl_, n);
    ERR_clear_error();
    if (n > 0) return false;
    if (err == SSL_ERROR_ZERO_RETURN) return true;
    if (err == SSL_ERROR_SYSCALL) return errno != EAGAIN && errno != EWOULDBLOCK;
    return err == SSL_ERROR_SSL;
  }

  std::string peer_serial() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return {};
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
    char* hex = BN_bn2hex(bn);
    std::string out = hex;
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    OPENSSL_free(hex);
    BN_free(bn);
    X509_free(cert);
    return out;
  }

  std::string protocol() const { return SSL_get_version(ssl_); }
  std::string cipher() const { return SSL_get_cipher_name(ssl_); }

  void close() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    ssl_ = nullptr;
    ctx_ = nullptr;
    fd_ = -1;
    buffer_.clear();
  }

 private:
  bool fill() {
    char buf[16384];
    const int n = SSL_read(ssl_, buf, sizeof buf);
    if (n <= 0) {
      ERR_clear_error();
      return false;
    }
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }

  Options options_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  std::string buffer_;
};

// A plain HTTP GET (the metrics listener): the body, or empty on failure.
inline std::string plain_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    (void)!::write(fd, req.data(), req.size());
    char buf[16384];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : out.substr(body + 4);
}

// The value of one Prometheus sample ("name{labels}" exactly as exposed), or -1.
inline double metric_value(const std::string& exposition, const std::string& series) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// A `gpuadmit serve` child process; killed when the test ends.
class ServerProcess {
 public:
  ServerProcess(const std::string& cert_dir, std::vector<std::string> extra_args = {},
                std::string log_path = "",
                std::vector<std::pair<std::string, std::string>> environment = {}) {
    log_path_ = log_path.empty() ? cert_dir + "/server.log" : log_path;
    std::vector<std::string> args = {GPUADMIT_BINARY,
                                     "serve",
                                     "--tls-cert",
                                     cert_dir + "/tls.crt",
                                     "--tls-key",
                                     cert_dir + "/tls.key",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--metrics-listen",
                                     "127.0.0.1:0",
                                     "--watch-interval-ms",
                                     "100",
                                     "--shutdown-delay",
                                     "0"};
    for (auto& a : extra_args) args.push_back(std::move(a));
    start_ = std::chrono::steady_clock::now();
    pid_ = ::fork();
    if (pid_ == 0) {
      // Dies with the test process, and holds none of CTest's output pipes: a crashed test
      // must not leave a server that keeps CTest waiting for EOF until its timeout.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
      const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(log, 2);
      ::dup2(log, 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~ServerProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Waits for the "ready" log line; false when the process exits or 10 s pass.
  bool wait_ready() {
    const std::regex ready(R"re("msg":"ready".*"port":(\d+),"metrics_port":(\d+))re");
    for (int i = 0; i < 2000; ++i) {
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, ready)) {
        port_ = std::stoi(m[1]);
        metrics_port_ = std::stoi(m[2]);
        return true;
      }
      if (wait_exit(0).has_value()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  void signal(int sig) { ::kill(pid_, sig); }

  // The exit code once the process has exited within timeout_ms (-1 for a signal death).
  std::optional<int> wait_exit(int timeout_ms) {
    if (exited_) return exit_code_;
    for (int waited = 0;; waited += 5) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return exit_code_;
      }
      if (waited >= timeout_ms) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::string log() const { return slurp(log_path_); }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  std::string metrics() const { return plain_get(metrics_port_, "/metrics"); }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  int port_ = 0, metrics_port_ = 0;
  std::string log_path_;
  std::chrono::steady_clock::time_point start_;
};

// An AdmissionReview as the API server sends it.
inline std::string admission_review(const std::string& uid, const std::string& object_json,
                                    const std::string& operation = "CREATE",
                                    const std::string& ns = "ml-team",
                                    const std::string& extra_request_fields = "") {
  std::string kind = "Pod", group, version = "v1", resource = "pods";
  if (object_json.find("\"kind\":\"Deployment\"") != std::string::npos) {
    kind = "Deployment";
    group = "apps";
    resource = "deployments";
  }
  std::string r = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)";
  r += R"("uid":")" + uid + R"(","kind":{"group":")" + group + R"(","version":")" + version +
       R"(","kind":")" + kind + R"("},"resource":{"group":")" + group + R"(","version":")" +
       version + R"(","resource":")" + resource + R"("},"requestKind":{"group":")" + group +
       R"(","version":")" + version + R"(","kind":")" + kind + R"("},"name":"workload",)" +
       R"("namespace":")" + ns + R"(","operation":")" + operation +
       R"(","userInfo":{"username":"alice","groups":["system:authenticated"]},)";
  if (!extra_request_fields.empty()) r += extra_request_fields + ",";
  r += R"("object":)" + object_json + R"(,"oldObject":null,"dryRun":false,)" +
       R"("options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}})";
  return r;
}

inline const char* kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"workload","namespace":"ml-team","labels":{"app":"train"}},"spec":{"containers":[{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.01-py3","command":["python","train.py"],"resources":{"limits":{"nvidia.com/gpu":"2","cpu":"8","memory":"64Gi"}}}],"restartPolicy":"Never"}})";
inline const char* kCpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"workload","namespace":"ml-team"},"spec":{"containers":[{"name":"web","image":"nginx:1.25","resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"256Mi"}}}]}})";
inline const char* kGpuDeployment =
    R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"workload","namespace":"ml-team","annotations":{"gpuadmit.io/workload":"inference"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"serve"}},"template":{"metadata":{"labels":{"app":"serve"}},"spec":{"containers":[{"name":"server","image":"nvcr.io/nvidia/tritonserver:24.01-py3","resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}}})";

}  // namespace gpuadmit::testing
