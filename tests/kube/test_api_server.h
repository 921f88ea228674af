#pragma once
// A simulated Kubernetes API server for the tests of kube/: a cpp-httplib HTTPS server on
// 127.0.0.1 with a CA made for the test, answering every request (GET, POST, PUT, DELETE) with
// a handler the test gives. No real API server runs in these tests.

// The same feature macros as `pkg-config --cflags cpp-httplib` (the library was built with them).
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "certs/certs.h"
#include "tests/webhook/support.h"  // TempDir

namespace gpuadmit::testing {

class TestApiServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // New certificates in `dir` (ca.crt, and tls.crt/tls.key for `cert_name`), unless `reuse`
  // says to serve those already there; `port` 0 picks a free one.
  TestApiServer(const std::string& dir, Handler handler, const std::string& cert_name = "127.0.0.1",
                int port = 0, bool reuse = false)
      : dir_(dir) {
    if (!reuse) {
      auto ca = certs::generate_ca("test-kube-ca", 1);
      auto leaf = certs::issue_certificate(
          std::get<certs::PemPair>(ca),
          {.common_name = "kube-apiserver", .names = {cert_name}, .valid_days = 1});
      REQUIRE(certs::write_certificate_files(dir, std::get<certs::PemPair>(ca).cert_pem,
                                             std::get<certs::PemPair>(leaf))
                  .empty());
    }
    server_ = std::make_unique<httplib::SSLServer>((dir + "/tls.crt").c_str(),
                                                   (dir + "/tls.key").c_str());
    REQUIRE(server_->is_valid());
    server_->Get(".*", handler);
    server_->Post(".*", handler);
    server_->Put(".*", handler);
    server_->Delete(".*", handler);
    if (port == 0) {
      port_ = server_->bind_to_any_port("127.0.0.1");
    } else if (server_->bind_to_port("127.0.0.1", port)) {
      port_ = port;
    }
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // stop() is a no-op until the accept loop runs: wait for it (bounded).
    for (int i = 0; i < 500 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(server_->is_running());
  }
  ~TestApiServer() { stop(); }
  TestApiServer(const TestApiServer&) = delete;
  TestApiServer& operator=(const TestApiServer&) = delete;

  // Stops accepting and waits for the requests being answered (idempotent).
  void stop() {
    if (!thread_.joinable()) return;
    server_->stop();
    thread_.join();
  }

  int port() const { return port_; }
  std::string ca_path() const { return dir_ + "/ca.crt"; }

 private:
  std::string dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gpuadmit::testing
