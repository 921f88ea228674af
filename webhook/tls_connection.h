#pragma once
// One accepted TLS connection, served by cpp-httplib's own request handling with buffered I/O.
//
// cpp-httplib 0.11.4's SSLSocketStream reads the request line and headers one byte per
// SSL_read, polls the socket before every read and every write, and writes each response as two
// SSL_writes (headers, then body): two TLS records and two TCP sends. Its keep-alive loop polls in
// 10 ms slices with a 1 ms sleep between them. Debian ships the library compiled, so none of this
// can be changed in place; but SSLServer's per-connection entry point
// (`process_and_close_socket`) is virtual and `Server::process_request` is protected. The
// server overrides the former with `serve_tls_connection`, which runs the handshake and the
// keep-alive loop itself and hands every request to `process_request` through a `TlsStream`:
// reads come from a 16 KiB buffer filled one TLS record at a time, writes are collected and sent
// as one SSL_write when the response is complete (or before the next read, so an interim
// "100 Continue" is never held back), and timeouts are the socket's SO_RCVTIMEO/SO_SNDTIMEO
// instead of a poll per call. Parsing, routing, handlers and response framing stay cpp-httplib's.

#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace gpuadmit::webhook {

class TlsStream final : public httplib::Stream {
 public:
  TlsStream(int fd, SSL* ssl, std::chrono::milliseconds io_timeout);

  bool is_readable() const override;
  bool is_writable() const override { return !failed_; }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  // Sends what write() collected as one SSL_write. False once the connection has failed.
  bool flush();
  // True when a request's bytes are already here (in this buffer or decrypted/read by OpenSSL).
  bool has_buffered_input() const;
  // True when the last response written carried "Connection: close": cpp-httplib 0.11.4 keeps
  // such a connection open otherwise and would parse an unread body as the next request.
  bool close_requested() const { return close_requested_; }
  bool failed() const { return failed_; }

 private:
  int fd_;
  SSL* ssl_;
  std::chrono::milliseconds io_timeout_;
  char in_[16 * 1024 + 512];  // one full TLS record's plaintext
  size_t in_begin_ = 0, in_end_ = 0;
  std::string out_;
  bool failed_ = false;
  bool close_requested_ = false;
  // Looked up once per connection, not once per request.
  mutable std::string remote_ip_, local_ip_;
  mutable int remote_port_ = -1, local_port_ = -1;
};

struct ConnectionLimits {
  std::chrono::milliseconds io_timeout{5000};           // per read/write, and the handshake
  std::chrono::milliseconds keep_alive_timeout{10000};  // idle between requests
  std::chrono::milliseconds linger{1000};               // draining an unread body before closing
  std::size_t max_requests = 1000000;                   // per connection
};

// Serves one request from `stream`: cpp-httplib's Server::process_request with the request's
// `ssl` set, as its SSLServer does. Returns false when the connection cannot continue.
using ProcessRequest =
    std::function<bool(httplib::Stream& stream, bool last, bool& connection_closed, SSL* ssl)>;

// Handshake, keep-alive loop, orderly close, for one accepted socket (closed on return). Ends
// idle waits promptly once `listener` is INVALID_SOCKET (cpp-httplib's Server::stop()).
bool serve_tls_connection(int fd, SSL_CTX* ctx, const ConnectionLimits& limits,
                          const std::atomic<socket_t>& listener, const ProcessRequest& process);

}  // namespace gpuadmit::webhook
