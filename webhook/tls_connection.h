#pragma once
// The byte stream of one TLS connection: what the connection pool reads into without blocking,
// and what a response is collected in before it goes out as one SSL_write.
//
// cpp-httplib 0.11.4's own SSLSocketStream reads the request line and headers one byte per
// SSL_read, polls the socket before every read and every write, and writes each response as two
// SSL_writes (headers, then body): two TLS records and two TCP sends. Here the pool fills a
// buffer without blocking (read_some) and hands a request on only once it is whole; reads then
// come from that buffer, writes are collected and sent as one SSL_write when the response is
// complete (or before the next read, so an interim "100 Continue" is never held back).
// webhook/httplib_bridge.h shows this stream to cpp-httplib as an httplib::Stream.
//
// The socket is non-blocking. Only a request handed over before its body arrived makes `read`
// wait, with poll() and the I/O timeout, as cpp-httplib's own stream does.

#include <openssl/ssl.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::webhook {

class TlsStream final {
 public:
  TlsStream(int fd, SSL* ssl, std::chrono::milliseconds io_timeout);
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Blocking reads and writes, for a request handed on before its body arrived: the semantics of
  // httplib::Stream (-1 on error or timeout, 0 at the end).
  bool is_readable() const;
  bool is_writable() const { return !failed_; }
  ssize_t read(char* ptr, size_t size);
  ssize_t write(const char* ptr, size_t size);
  void get_remote_ip_and_port(std::string& ip, int& port) const;
  void get_local_ip_and_port(std::string& ip, int& port) const;
  int socket() const { return fd_; }

  enum class Fill {
    kData,        // bytes were added (at most one TLS record's worth)
    kWouldBlock,  // nothing has arrived; OpenSSL holds no unread bytes either
    kFull,        // `limit` bytes are already buffered: nothing was read
    kEnd,         // the peer closed the connection (close_notify or FIN)
    kFailed,      // a TLS or socket error
  };
  // One SSL_read, without waiting, unless `limit` bytes are buffered already.
  Fill read_some(std::size_t limit);
  // The buffer's size once read_some(limit) has made room (what the memory budget is asked for
  // before the read).
  std::size_t capacity_for_read(std::size_t limit) const;
  std::size_t capacity() const { return in_.size(); }
  // Makes the buffer hold `total` bytes from the first unread one (a body of known length is
  // read into a buffer of its size, not one doubled past it).
  void reserve_total(std::size_t total);
  // Renames the buffered header whose name starts `offset` bytes into the buffered data
  // ("Expect" → "Xxpect"), once the pool has answered its "100 Continue" itself.
  void defuse_header(std::size_t offset);
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

  // Sends what write() collected as one SSL_write, waiting (poll, the I/O timeout) while the
  // socket is full. False once the connection has failed.
  bool flush();
  enum class Flush { kDone, kWouldBlock, kFailed };
  // flush() without waiting: kWouldBlock leaves the rest to send once the socket is writable
  // (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER is set on every connection).
  Flush flush_some();
  bool has_output() const { return !out_.empty(); }
  // The response written said "Connection: close": the pool closes the connection after it
  // (lingering), whatever else the request handler reported.
  void request_close() { close_requested_ = true; }
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

// Serves one request from `stream` (webhook/httplib_bridge.h: cpp-httplib's process_request, or
// the review fast path). Returns false when the connection cannot continue.
using ProcessRequest =
    std::function<bool(TlsStream& stream, bool last, bool& connection_closed, SSL* ssl)>;

}  // namespace gpuadmit::webhook
