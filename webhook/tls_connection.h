#pragma once
// The byte stream of one TLS connection, as cpp-httplib's request handling reads and writes it.
//
// cpp-httplib 0.11.4's SSLSocketStream reads the request line and headers one byte per
// SSL_read, polls the socket before every read and every write, and writes each response as two
// SSL_writes (headers, then body): two TLS records and two TCP sends. Debian ships the library
// compiled, so none of this can be changed in place; but SSLServer's per-connection entry point
// (`process_and_close_socket`) is virtual and `Server::process_request` is protected. The server
// hands each accepted socket to a ConnectionPool (webhook/connection_pool.h), which calls
// `process_request` with a TlsStream once a whole request is buffered: reads come from a buffer
// the pool filled without blocking, writes are collected and sent as one SSL_write when the
// response is complete (or before the next read, so an interim "100 Continue" is never held
// back). Parsing, routing, handlers and response framing stay cpp-httplib's.
//
// The socket is non-blocking. Only a request handed over before its body arrived (see
// webhook/request_framing.h) makes `read` wait, with poll() and the I/O timeout, as cpp-httplib's
// own stream does.

#include <httplib.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

  enum class Fill {
    kData,        // bytes were added (at most one TLS record's worth)
    kWouldBlock,  // nothing has arrived; OpenSSL holds no unread bytes either
    kFull,        // `limit` bytes are already buffered: nothing was read
    kEnd,         // the peer closed the connection (close_notify or FIN)
    kFailed,      // a TLS or socket error
  };
  // One SSL_read, without waiting, unless `limit` bytes are buffered already.
  Fill read_some(std::size_t limit);
  // True when OpenSSL has read bytes from the socket that read_some has not returned yet: the
  // socket's readiness no longer says that something is waiting.
  bool tls_pending() const { return SSL_has_pending(ssl_) == 1; }
  // The bytes read and not yet consumed by cpp-httplib.
  std::string_view buffered() const { return {in_.data() + in_begin_, in_end_ - in_begin_}; }
  // Marks the first `n` buffered bytes as read (a request the review fast path answered).
  void consume(std::size_t n) { in_begin_ += std::min(n, in_end_ - in_begin_); }
  // Reads past the buffer fail at once: a request that timed out while arriving is handed over
  // as it is, and cpp-httplib answers (or drops) it as it would after its read timeout.
  void end_input() { input_ended_ = true; }
  // Between requests: moves unread bytes to the front, releases a buffer grown by a large body.
  void compact();

  // Sends what write() collected as one SSL_write. False once the connection has failed.
  bool flush();
  // True when the last response written carried "Connection: close": cpp-httplib 0.11.4 keeps
  // such a connection open otherwise and would parse an unread body as the next request.
  bool close_requested() const { return close_requested_; }

 private:
  // Waits (poll, at most the I/O timeout) for what OpenSSL needs after `ssl_error`.
  bool wait_for(int ssl_error) const;
  void reserve_tail(std::size_t bytes);

  int fd_;
  SSL* ssl_;
  std::chrono::milliseconds io_timeout_;
  std::vector<char> in_;
  std::size_t in_begin_ = 0, in_end_ = 0;
  std::string out_;
  bool failed_ = false;
  bool input_ended_ = false;
  bool close_requested_ = false;
  // Looked up once per connection, not once per request.
  mutable std::string remote_ip_, local_ip_;
  mutable int remote_port_ = -1, local_port_ = -1;
};

// Serves one request from `stream`: cpp-httplib's Server::process_request with the request's
// `ssl` set, as its SSLServer does. Returns false when the connection cannot continue.
using ProcessRequest =
    std::function<bool(httplib::Stream& stream, bool last, bool& connection_closed, SSL* ssl)>;

}  // namespace gpuadmit::webhook
