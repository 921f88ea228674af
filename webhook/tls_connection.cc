#include "webhook/tls_connection.h"

#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace gpuadmit::webhook {
namespace {

constexpr std::size_t kFlushThreshold = 64 * 1024;   // a larger response goes out in parts
constexpr std::size_t kReadChunk = 16 * 1024 + 512;  // one full TLS record's plaintext
constexpr std::size_t kKeptCapacity = 64 * 1024;     // compact() frees a buffer grown past this

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

}  // namespace

TlsStream::TlsStream(int fd, SSL* ssl, std::chrono::milliseconds io_timeout)
    : fd_(fd), ssl_(ssl), io_timeout_(io_timeout), in_(kReadChunk) {
  out_.reserve(4096);
}

bool TlsStream::wait_for(int ssl_error) const {
  short events = 0;
  if (ssl_error == SSL_ERROR_WANT_READ) events = POLLIN;
  if (ssl_error == SSL_ERROR_WANT_WRITE) events = POLLOUT;
  if (events == 0) return false;
  pollfd p{fd_, events, 0};
  while (true) {
    const int n = ::poll(&p, 1, static_cast<int>(io_timeout_.count()));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

void TlsStream::reserve_tail(std::size_t bytes) {
  if (in_.size() - in_end_ >= bytes) return;
  if (in_begin_ > 0) {
    std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  if (in_.size() - in_end_ < bytes) in_.resize(std::max(in_.size() * 2, in_end_ + bytes));
}

std::size_t TlsStream::capacity_for_read(std::size_t limit) const {
  if (in_end_ - in_begin_ >= limit) return in_.size();
  const std::size_t bytes = std::min(kReadChunk, limit - (in_end_ - in_begin_));
  const std::size_t end = in_end_ - in_begin_;  // after moving unread bytes to the front
  if (in_.size() - in_end_ >= bytes || in_.size() - end >= bytes) return in_.size();
  return std::max(in_.size() * 2, end + bytes);
}

void TlsStream::reserve_total(std::size_t total) {
  if (in_.size() - in_begin_ >= total) return;
  std::vector<char> exact(std::max(total, in_end_ - in_begin_));
  std::memcpy(exact.data(), in_.data() + in_begin_, in_end_ - in_begin_);
  in_end_ -= in_begin_;
  in_begin_ = 0;
  in_.swap(exact);
}

void TlsStream::defuse_header(std::size_t offset) {
  if (in_begin_ + offset < in_end_) in_[in_begin_ + offset] = 'X';
}

void TlsStream::compact() {
  if (in_begin_ == in_end_) {
    in_begin_ = in_end_ = 0;
    if (in_.size() > kKeptCapacity) std::vector<char>(kReadChunk).swap(in_);
  }
}

TlsStream::Fill TlsStream::read_some(std::size_t limit) {
  if (in_end_ - in_begin_ >= limit) return Fill::kFull;
  reserve_tail(std::min(kReadChunk, limit - (in_end_ - in_begin_)));
  while (true) {
    const int n = SSL_read(ssl_, in_.data() + in_end_, static_cast<int>(in_.size() - in_end_));
    if (n > 0) {
      in_end_ += static_cast<std::size_t>(n);
      return Fill::kData;
    }
    const int error = SSL_get_error(ssl_, n);
    ERR_clear_error();
    if (error == SSL_ERROR_WANT_READ) return Fill::kWouldBlock;
    // A TLS 1.3 key update may need to write while reading: rare, wait for it here.
    if (error == SSL_ERROR_WANT_WRITE && wait_for(error)) continue;
    if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && n == 0)) return Fill::kEnd;
    return Fill::kFailed;
  }
}

bool TlsStream::is_readable() const {
  if (in_begin_ < in_end_ || SSL_has_pending(ssl_) == 1) return true;
  if (input_ended_) return false;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(io_timeout_.count())) > 0;
}

ssize_t TlsStream::read(char* ptr, size_t size) {
  if (in_begin_ == in_end_) {
    // The client may be waiting for what was written so far ("100 Continue") before it sends.
    if (!flush() || input_ended_) return -1;
    in_begin_ = in_end_ = 0;
    while (true) {
      const int n = SSL_read(ssl_, in_.data(), static_cast<int>(in_.size()));
      if (n > 0) {
        in_end_ = static_cast<std::size_t>(n);
        break;
      }
      const int error = SSL_get_error(ssl_, n);
      ERR_clear_error();
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      // Nothing yet: wait at most the I/O timeout; a timeout is an error like any other.
      if (!wait_for(error)) return -1;
    }
  }
  const size_t n = std::min(size, in_end_ - in_begin_);
  std::memcpy(ptr, in_.data() + in_begin_, n);
  in_begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t TlsStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  out_.append(ptr, size);
  if (out_.size() >= kFlushThreshold && !flush()) return -1;
  return static_cast<ssize_t>(size);
}

bool TlsStream::flush() {
  if (failed_) return false;
  if (out_.empty()) return true;
  // Without SSL_MODE_ENABLE_PARTIAL_WRITE, SSL_write succeeds only once all of it is sent (as
  // records of up to 16 KiB); after WANT_WRITE it is retried with the same arguments.
  while (true) {
    const int n = SSL_write(ssl_, out_.data(), static_cast<int>(out_.size()));
    if (n > 0) break;
    const int error = SSL_get_error(ssl_, n);
    ERR_clear_error();
    if (!wait_for(error)) {
      failed_ = true;
      out_.clear();
      return false;
    }
  }
  out_.clear();
  return true;
}

TlsStream::Flush TlsStream::flush_some() {
  if (failed_) return Flush::kFailed;
  if (out_.empty()) return Flush::kDone;
  const int n = SSL_write(ssl_, out_.data(), static_cast<int>(out_.size()));
  if (n > 0) {
    out_.clear();
    return Flush::kDone;
  }
  const int error = SSL_get_error(ssl_, n);
  ERR_clear_error();
  if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) return Flush::kWouldBlock;
  failed_ = true;
  out_.clear();
  return Flush::kFailed;
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

}  // namespace gpuadmit::webhook
