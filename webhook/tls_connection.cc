#include "webhook/tls_connection.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpuadmit::webhook {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kFlushThreshold = 64 * 1024;  // a larger response goes out in parts

void set_socket_timeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// The numeric address of a socket's end, as cpp-httplib reports it (getnameinfo with
// NI_NUMERICHOST).
void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ip.clear();
  port = 0;
  if (rc != 0) return;
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, nullptr, 0,
                    NI_NUMERICHOST) == 0) {
    ip = host;
  }
  if (addr.ss_family == AF_INET) {
    port = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    port = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  }
}

// Waits until `fd` is readable, `deadline` passes or the listener closes (checked every 100 ms,
// like cpp-httplib's own keep-alive wait, so Server::stop() ends idle connections promptly).
bool wait_readable(int fd, Clock::time_point deadline, const std::atomic<socket_t>& listener) {
  while (listener.load(std::memory_order_relaxed) != INVALID_SOCKET) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
  return false;
}

// After a response that closes the connection: close_notify and FIN, then read and discard what
// the client still sends (the rest of a refused body) until it closes, for at most `linger`.
// Closing a socket with unread data sends RST, and an RST can destroy the response before the
// client has read it (what nginx's lingering_close avoids).
void linger_close(int fd, SSL* ssl, std::chrono::milliseconds linger) {
  SSL_shutdown(ssl);
  ERR_clear_error();
  ::shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + linger;
  char scratch[16384];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = ::recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n == 0) break;  // the client closed: a clean close on both sides
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;
  }
}

}  // namespace

TlsStream::TlsStream(int fd, SSL* ssl, std::chrono::milliseconds io_timeout)
    : fd_(fd), ssl_(ssl), io_timeout_(io_timeout) {
  out_.reserve(4096);
}

bool TlsStream::has_buffered_input() const {
  return in_begin_ < in_end_ || SSL_has_pending(ssl_) == 1;
}

bool TlsStream::is_readable() const {
  if (has_buffered_input()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(io_timeout_.count())) > 0;
}

ssize_t TlsStream::read(char* ptr, size_t size) {
  if (in_begin_ == in_end_) {
    // The client may be waiting for what was written so far ("100 Continue") before it sends.
    if (!flush()) return -1;
    // Blocks for at most SO_RCVTIMEO; a timeout is an error like any other.
    const int n = SSL_read(ssl_, in_, static_cast<int>(sizeof in_));
    if (n <= 0) {
      ERR_clear_error();
      return n == 0 ? 0 : -1;
    }
    in_begin_ = 0;
    in_end_ = static_cast<size_t>(n);
  }
  const size_t n = std::min(size, in_end_ - in_begin_);
  std::memcpy(ptr, in_ + in_begin_, n);
  in_begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t TlsStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  // cpp-httplib writes a response's status line and headers in one call, the body in another.
  const std::string_view chunk(ptr, size);
  if (chunk.starts_with("HTTP/1.") && chunk.find("\r\nConnection: close\r\n") != chunk.npos) {
    close_requested_ = true;
  }
  out_.append(ptr, size);
  if (out_.size() >= kFlushThreshold && !flush()) return -1;
  return static_cast<ssize_t>(size);
}

bool TlsStream::flush() {
  if (failed_) return false;
  if (out_.empty()) return true;
  // Blocking socket, no partial writes: SSL_write returns once all of it is sent (as records of
  // up to 16 KiB), or fails on SO_SNDTIMEO.
  const int n = SSL_write(ssl_, out_.data(), static_cast<int>(out_.size()));
  out_.clear();
  if (n <= 0) {
    ERR_clear_error();
    failed_ = true;
    return false;
  }
  return true;
}

void TlsStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  if (remote_port_ < 0) address_of(fd_, /*peer=*/true, remote_ip_, remote_port_);
  ip = remote_ip_;
  port = remote_port_;
}

void TlsStream::get_local_ip_and_port(std::string& ip, int& port) const {
  if (local_port_ < 0) address_of(fd_, /*peer=*/false, local_ip_, local_port_);
  ip = local_ip_;
  port = local_port_;
}

bool serve_tls_connection(int fd, SSL_CTX* ctx, const ConnectionLimits& limits,
                          const std::atomic<socket_t>& listener, const ProcessRequest& process) {
  // Blocking I/O bounded by the socket's own timeouts: no poll before every read and write.
  set_socket_timeouts(fd, limits.io_timeout);
  int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);

  bool clean = false;
  SSL* ssl = SSL_new(ctx);
  if (ssl != nullptr && SSL_set_fd(ssl, fd) == 1) {
    // Read whole records (and whatever follows) per recv. Safe here, unlike with cpp-httplib's
    // stream, because the keep-alive wait asks OpenSSL for buffered bytes before polling.
    SSL_set_read_ahead(ssl, 1);
    if (SSL_accept(ssl) == 1) {
      TlsStream stream(fd, ssl, limits.io_timeout);
      std::size_t left = limits.max_requests;
      clean = true;
      while (left > 0) {
        if (!stream.has_buffered_input() &&
            !wait_readable(fd, Clock::now() + limits.keep_alive_timeout, listener)) {
          break;  // idle timeout or server stopping: an orderly close
        }
        bool connection_closed = false;
        const bool ok = process(stream, left == 1, connection_closed, ssl);
        const bool sent = stream.flush();
        if (!ok || !sent) {
          clean = false;
          break;
        }
        if (stream.close_requested()) {
          linger_close(fd, ssl, limits.linger);
          clean = false;  // close_notify already sent
          break;
        }
        if (connection_closed) break;
        --left;
      }
    }
  }
  if (ssl != nullptr) {
    if (clean) SSL_shutdown(ssl);  // close_notify; the client's reply is not awaited
    SSL_free(ssl);
  }
  ERR_clear_error();
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  return clean;
}

}  // namespace gpuadmit::webhook
