#pragma once
// Test-only: a local HTTPS server (cpp-httplib's SSLServer on 127.0.0.1) standing in for the
// Kubernetes API, with a test CA, optionally requiring client certificates; each test answers
// with its own handler. Used by tests/kube's list, kubeconfig and `fleet --live` API tests.

// The same feature macros as `pkg-config --cflags cpp-httplib` (the library was built with them).
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "certs/certs.h"
#include "engine/json.h"

namespace gpuadmit::kube::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gpuadmit-kube-list-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name, std::ios::binary) << text;
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

// A test CA, a serving certificate for 127.0.0.1 and a client certificate (CN "fleet-reader"),
// all PEM, in `dir` too (ca.crt, tls.crt, tls.key, client.crt, client.key).
struct TestPki {
  certs::PemPair ca, serving, client;
  explicit TestPki(const std::string& dir) {
    ca = std::get<certs::PemPair>(certs::generate_ca("test-kube-ca", 1));
    serving = std::get<certs::PemPair>(certs::issue_certificate(
        ca, {.common_name = "kube-apiserver", .names = {"127.0.0.1"}, .valid_days = 1}));
    client = std::get<certs::PemPair>(certs::issue_certificate(ca, {.common_name = "fleet-reader",
                                                                    .names = {"fleet-reader"},
                                                                    .valid_days = 1,
                                                                    .client_auth = true}));
    REQUIRE(certs::write_certificate_files(dir, ca.cert_pem, serving).empty());
    std::ofstream(dir + "/client.crt") << client.cert_pem;
    std::ofstream(dir + "/client.key") << client.key_pem;
  }
};

struct Request {
  std::string path;           // without the query
  httplib::Params params;     // the query, decoded
  std::string authorization;  // the Authorization header
};

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

class FakeListServer {
 public:
  // `require_client_cert`: the TLS handshake demands a certificate signed by the test CA.
  FakeListServer(const std::string& dir, Handler handler, bool require_client_cert = false)
      : handler_(std::move(handler)) {
    const std::string cert = dir + "/tls.crt", key = dir + "/tls.key", ca = dir + "/ca.crt";
    server_ = require_client_cert
                  ? std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str(), ca.c_str())
                  : std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
    REQUIRE(server_->is_valid());
    server_->Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back({req.path, req.params, req.get_header_value("Authorization")});
      }
      handler_(req, res);
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    for (int i = 0; i < 500 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(server_->is_running());
  }
  ~FakeListServer() {
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  Handler handler_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::vector<Request> requests_;
};

// metav1.Status as the API server writes it.
inline std::string status_body(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}}
      .dump();
}

// A page of a List as the API server writes it: kind, apiVersion, metadata (continue), items.
inline std::string list_page(const std::string& kind, const Json& items, const std::string& next) {
  Json metadata = {{"resourceVersion", "9001"}};
  if (!next.empty()) metadata["continue"] = next;
  return Json{{"kind", kind}, {"apiVersion", "v1"}, {"metadata", metadata}, {"items", items}}
      .dump();
}

}  // namespace gpuadmit::kube::testing
