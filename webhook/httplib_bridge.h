#pragma once
// Everything gpuadmit relies on in cpp-httplib beyond its public API, in one place.
//
// Debian ships cpp-httplib compiled (libcpp-httplib-dev 0.11.4), and the webhook reaches past its
// public API in four ways, all here:
//   - SSLServer's per-connection entry point `process_and_close_socket` is overridden, so an
//     accepted socket goes to the ConnectionPool (webhook/connection_pool.h), not to a thread;
//   - the protected `Server::process_request` is called with a StreamAdapter over the pool's
//     TlsStream once a whole request is buffered;
//   - `new_task_queue` is replaced (the accept loop's hand-over runs inline) and the protected
//     `svr_sock_` is read (the listening socket is re-listened with a larger backlog);
//   - process_request's `setup_request` hook (run on the parsed request before routing)
//     adjusts what cpp-httplib would otherwise decide from the request's headers.
// Three files mirror cpp-httplib 0.11.4's behaviour instead of calling it, and must agree with it:
// webhook/request_framing.cc (detail::read_headers: where a request's headers end),
// webhook/review_fast_path.cc (parse_request_line and write_response_core: which requests it may
// answer itself, and the exact status line and headers), and StreamAdapter::write below (a
// response's status line and headers arrive in one write). httplib_bridge.cc stops the build
// when CPPHTTPLIB_VERSION is not the one they were checked against; docs/architecture.md
// ("Upgrading cpp-httplib") says what to re-check and which tests prove the two paths agree.

#include <httplib.h>
#include <openssl/ssl.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "webhook/connection_pool.h"
#include "webhook/tls_connection.h"

namespace gpuadmit::webhook {

// The TlsStream as cpp-httplib reads and writes it.
class StreamAdapter final : public httplib::Stream {
 public:
  explicit StreamAdapter(TlsStream& stream) : stream_(stream) {}
  bool is_readable() const override { return stream_.is_readable(); }
  bool is_writable() const override { return stream_.is_writable(); }
  ssize_t read(char* ptr, size_t size) override { return stream_.read(ptr, size); }
  // cpp-httplib 0.11.4 writes a response's status line and headers in one call, the body in
  // another: a head that says "Connection: close" makes the pool close the connection after it
  // (0.11.4 keeps it open otherwise and would parse an unread body as the next request).
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    stream_.get_remote_ip_and_port(ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    stream_.get_local_ip_and_port(ip, port);
  }
  socket_t socket() const override { return stream_.socket(); }

 private:
  TlsStream& stream_;
};

// True when cpp-httplib 0.11.4's write_response_core will itself write "Connection: close" for
// this request (it then must not be set on the response too, or it is sent twice). The request
// hook below makes that true for every request whose connection ends after the answer.
bool httplib_closes_after(const httplib::Request& req);

// SSLServer whose listening socket we can reach, and whose connections are served by a
// ConnectionPool.
class HttpsServer : public httplib::SSLServer {
 public:
  using httplib::SSLServer::SSLServer;
  int listening_socket() const { return svr_sock_; }

  // Tried on each request before cpp-httplib: serves it and returns whether the connection may
  // go on, or returns nullopt to leave it to cpp-httplib.
  using FastPath = std::function<std::optional<bool>(TlsStream&, bool last, bool& closed)>;

  // Before listen_after_bind(): the pool's threads start here. Requests cpp-httplib serves get
  // their `ssl`, no Accept-Encoding and no ranges (answers are never compressed or sliced), and
  // an exact Connection header (see httplib_closes_after).
  void start_pool(const ConnectionLimits& limits, std::size_t threads, FastPath fast_path,
                  RefuseRequest refuse);
  ConnectionPool* pool() { return pool_.get(); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  std::unique_ptr<ConnectionPool> pool_;
};

// The metrics listener: cpp-httplib's own thread-per-connection server, listening socket exposed.
class PlainServer : public httplib::Server {
 public:
  int listening_socket() const { return svr_sock_; }
};

}  // namespace gpuadmit::webhook
