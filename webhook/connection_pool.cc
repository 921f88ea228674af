#include "webhook/connection_pool.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "webhook/request_framing.h"

namespace gpuadmit::webhook {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kSweepInterval = std::chrono::milliseconds(100);
constexpr int kStoppingPollMs = 10;

// A connection's state word: its generation (bumped on every close), and two flags.
constexpr std::uint32_t kOwned = 1;    // a thread is serving it; otherwise its socket is armed
constexpr std::uint32_t kPending = 2;  // an event arrived while it was owned
constexpr int kGenerationShift = 2;
// An epoll event carries the connection's address (user-space addresses fit in 48 bits on
// x86-64 and arm64) and the low 16 bits of its generation.
constexpr int kTokenShift = 48;
constexpr std::uint64_t kAddressMask = (std::uint64_t{1} << kTokenShift) - 1;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::int64_t ns(std::chrono::milliseconds d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

std::uint32_t generation_of(std::uint32_t state) { return state >> kGenerationShift; }

}  // namespace

struct ConnectionPool::Connection {
  int fd = -1;
  SSL* ssl = nullptr;
  std::optional<TlsStream> stream;
  Phase phase = Phase::kHandshake;
  bool armed = false;  // registered in the epoll set
  std::size_t requests_left = 0;
  // Read by the sweep while another thread may own the connection, hence atomics.
  std::atomic<std::uint32_t> state{kOwned};
  std::atomic<std::int64_t> deadline_ns{0};
  bool in_use = false;  // under mutex_

  std::uint64_t token() const {
    const std::uint64_t generation = generation_of(state.load(std::memory_order_relaxed));
    return reinterpret_cast<std::uintptr_t>(this) | (generation & 0xffff) << kTokenShift;
  }
  void set_deadline(std::chrono::milliseconds from_now) {
    deadline_ns.store(now_ns() + ns(from_now), std::memory_order_relaxed);
  }
};

ConnectionPool::ConnectionPool(SSL_CTX* ctx, ConnectionLimits limits, std::size_t threads,
                               ProcessRequest process)
    : ctx_(ctx), limits_(limits), process_(std::move(process)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ConnectionPool::~ConnectionPool() {
  stop();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void ConnectionPool::add(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  int yes = 1;
  SSL* ssl = nullptr;
  if (epoll_fd_ < 0 || stopping_.load() || open_.load() >= limits_.max_connections || flags < 0 ||
      ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes) != 0 ||
      (ssl = SSL_new(ctx_)) == nullptr || SSL_set_fd(ssl, fd) != 1) {
    if (ssl != nullptr) SSL_free(ssl);
    ERR_clear_error();
    ::close(fd);
    return;
  }
  // Whole records (and whatever follows) per recv; serve_open asks OpenSSL for bytes it holds
  // before it relies on the socket's readiness.
  SSL_set_read_ahead(ssl, 1);
  SSL_set_accept_state(ssl);

  Connection* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      all_.push_back(std::make_unique<Connection>());
      c = all_.back().get();
    } else {
      c = free_.back();
      free_.pop_back();
    }
    c->in_use = true;
  }
  open_.fetch_add(1);
  if ((reinterpret_cast<std::uintptr_t>(c) & ~kAddressMask) != 0) {  // not on this platform
    c->ssl = ssl;
    c->fd = fd;
    close(*c, false);
    return;
  }
  // Owned by this thread (state kOwned since construction or the last close) until armed.
  c->fd = fd;
  c->ssl = ssl;
  c->stream.emplace(fd, ssl, limits_.io_timeout);
  c->phase = Phase::kHandshake;
  c->armed = false;
  c->requests_left = limits_.max_requests;
  c->set_deadline(limits_.io_timeout);  // for the handshake
  if (park(*c, EPOLLIN) == Outcome::kParked && !release(*c)) run(*c);
}

void ConnectionPool::stop() {
  std::call_once(stopped_, [this] {
    stopping_.store(true);
    for (std::thread& t : threads_) t.join();
    sweep(/*stopping=*/true);  // no thread left: only when there was none to begin with
  });
}

void ConnectionPool::work() {
  epoll_event event{};
  while (true) {
    const bool stopping = stopping_.load();
    if (stopping) {
      sweep(/*stopping=*/true);
      if (open_.load() == 0) return;
    } else {
      const std::int64_t now = now_ns();
      std::int64_t due = next_sweep_ns_.load(std::memory_order_relaxed);
      if (now >= due && next_sweep_ns_.compare_exchange_strong(due, now + ns(kSweepInterval))) {
        sweep(/*stopping=*/false);
      }
    }
    const int timeout_ms = stopping ? kStoppingPollMs : static_cast<int>(kSweepInterval.count());
    if (::epoll_wait(epoll_fd_, &event, 1, timeout_ms) <= 0) continue;
    auto* c = reinterpret_cast<Connection*>(event.data.u64 & kAddressMask);
    if (claim(c, static_cast<std::uint32_t>(event.data.u64 >> kTokenShift))) run(*c);
  }
}

ConnectionPool::Connection* ConnectionPool::claim(Connection* c, std::uint32_t generation) {
  std::uint32_t s = c->state.load(std::memory_order_acquire);
  while (true) {
    if ((generation_of(s) & 0xffff) != (generation & 0xffff)) return nullptr;  // closed since
    if ((s & kOwned) != 0) {
      // Its owner is about to re-arm it or has just done so: the event is theirs to act on.
      if ((s & kPending) != 0 ||
          c->state.compare_exchange_weak(s, s | kPending, std::memory_order_acq_rel)) {
        return nullptr;
      }
      continue;
    }
    if (c->state.compare_exchange_weak(s, s | kOwned, std::memory_order_acq_rel)) return c;
  }
}

bool ConnectionPool::release(Connection& c) {
  std::uint32_t s = c.state.load(std::memory_order_acquire);
  while (true) {
    if ((s & kPending) != 0) {
      // An event came between re-arming and now; its claim failed, so serve it here.
      if (c.state.compare_exchange_weak(s, s & ~kPending, std::memory_order_acq_rel)) {
        return false;
      }
      continue;
    }
    if (c.state.compare_exchange_weak(s, s & ~kOwned, std::memory_order_acq_rel)) return true;
  }
}

void ConnectionPool::run(Connection& c) {
  while (serve(c) == Outcome::kParked && !release(c)) {
  }
}

ConnectionPool::Outcome ConnectionPool::park(Connection& c, std::uint32_t events) {
  epoll_event event{};
  event.events = events | EPOLLONESHOT;
  event.data.u64 = c.token();
  // Level-triggered: bytes that arrived since the last read report at once.
  if (::epoll_ctl(epoll_fd_, c.armed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, &event) != 0) {
    return close(c, /*send_close_notify=*/false);
  }
  c.armed = true;
  return Outcome::kParked;
}

ConnectionPool::Outcome ConnectionPool::close(Connection& c, bool send_close_notify) {
  if (send_close_notify && c.phase == Phase::kOpen) SSL_shutdown(c.ssl);  // not awaited
  c.stream.reset();
  SSL_free(c.ssl);
  ERR_clear_error();
  ::close(c.fd);  // also leaves the epoll set
  c.ssl = nullptr;
  c.fd = -1;
  // A new generation: events still in flight for the old one are ignored.
  const std::uint32_t s = c.state.load(std::memory_order_relaxed);
  c.state.store((generation_of(s) + 1) << kGenerationShift | kOwned, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    c.in_use = false;
    free_.push_back(&c);
  }
  open_.fetch_sub(1);
  return Outcome::kClosed;
}

ConnectionPool::Outcome ConnectionPool::serve(Connection& c) {
  switch (c.phase) {
    case Phase::kHandshake: {
      const int rc = SSL_accept(c.ssl);
      if (rc == 1) {
        c.phase = Phase::kOpen;
        return serve_open(c);
      }
      const int error = SSL_get_error(c.ssl, rc);
      ERR_clear_error();
      if (error == SSL_ERROR_WANT_READ) return park(c, EPOLLIN);
      if (error == SSL_ERROR_WANT_WRITE) return park(c, EPOLLOUT);
      return close(c, /*send_close_notify=*/false);
    }
    case Phase::kOpen:
      return serve_open(c);
    case Phase::kLingering: {
      char scratch[16384];
      while (true) {
        const ssize_t n = ::recv(c.fd, scratch, sizeof scratch, MSG_DONTWAIT);
        if (n > 0) continue;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return park(c, EPOLLIN);
        return close(c, /*send_close_notify=*/false);  // the client closed too: done
      }
    }
  }
  return close(c, /*send_close_notify=*/false);
}

ConnectionPool::Outcome ConnectionPool::serve_open(Connection& c) {
  const std::size_t limit = kMaxHeaderBytes + limits_.max_body;
  TlsStream& stream = *c.stream;
  // Woken by the socket: read it. After a response, read only if OpenSSL holds bytes; otherwise
  // re-arming reports a next request that is already here, without a recv that finds nothing.
  bool may_read = true;
  while (true) {
    const std::string_view buffered = stream.buffered();
    const bool ready = !buffered.empty() && frame_request(buffered, limits_.max_body).ready;
    if (ready || buffered.size() >= limit) {  // at the limit, cpp-httplib refuses it
      if (std::optional<Outcome> done = answer(c)) return *done;
      stream.compact();
      const bool idle = stream.buffered().empty();
      if (idle && stopping_.load()) return close(c, /*send_close_notify=*/true);
      c.set_deadline(idle ? limits_.keep_alive_timeout : limits_.io_timeout);
      may_read = stream.tls_pending();
      continue;
    }
    if (!may_read && !stream.tls_pending()) return park(c, EPOLLIN);
    switch (stream.read_some(limit)) {
      case TlsStream::Fill::kData:
        c.set_deadline(limits_.io_timeout);  // a request is arriving
        may_read = true;
        break;
      case TlsStream::Fill::kFull:
        break;  // handled above on the next turn
      case TlsStream::Fill::kWouldBlock:
        if (stream.buffered().empty()) {
          if (stopping_.load()) return close(c, /*send_close_notify=*/true);
          c.set_deadline(limits_.keep_alive_timeout);
        }
        return park(c, EPOLLIN);
      case TlsStream::Fill::kEnd: {
        if (stream.buffered().empty()) return close(c, /*send_close_notify=*/false);
        // The client ended its side mid-request: what is here is all there will be.
        stream.end_input();
        if (std::optional<Outcome> done = answer(c)) return *done;
        return close(c, /*send_close_notify=*/true);
      }
      case TlsStream::Fill::kFailed:
        return close(c, /*send_close_notify=*/false);
    }
  }
}

std::optional<ConnectionPool::Outcome> ConnectionPool::answer(Connection& c) {
  TlsStream& stream = *c.stream;
  bool connection_closed = false;
  const bool ok = process_(stream, c.requests_left <= 1, connection_closed, c.ssl);
  const bool sent = stream.flush();
  if (!ok || !sent) return close(c, /*send_close_notify=*/false);
  if (stream.close_requested()) {
    // close_notify and FIN, then read and discard what the client still sends (the rest of a
    // refused body) until it closes, for at most `linger`: closing a socket with unread data
    // sends RST, and an RST can destroy the response before the client has read it (what
    // nginx's lingering_close avoids).
    SSL_shutdown(c.ssl);
    ERR_clear_error();
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLingering;
    c.set_deadline(limits_.linger);
    return park(c, EPOLLIN);
  }
  if (connection_closed || --c.requests_left == 0) return close(c, /*send_close_notify=*/true);
  return std::nullopt;
}

void ConnectionPool::sweep(bool stopping) {
  const std::int64_t now = now_ns();
  std::vector<std::pair<Connection*, bool>> claimed;  // and whether its deadline has passed
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Connection>& owner : all_) {
      Connection* c = owner.get();
      if (!c->in_use) continue;
      const std::uint32_t s = c->state.load(std::memory_order_acquire);
      if ((s & kOwned) != 0) continue;
      const bool expired = now >= c->deadline_ns.load(std::memory_order_relaxed);
      if ((expired || stopping) && claim(c, generation_of(s))) claimed.emplace_back(c, expired);
    }
  }
  for (const auto& [c, expired] : claimed) {
    const bool receiving = c->phase == Phase::kOpen && !c->stream->buffered().empty();
    if (!expired && (receiving || c->phase == Phase::kLingering)) {
      // Stopping: a request still arriving, or a response still being read, may finish.
      if (!release(*c)) run(*c);
    } else if (receiving) {
      // A request that stopped arriving: cpp-httplib answers it as after its read timeout (a
      // 400 for a body cut short; nothing for headers cut short), then the connection closes.
      c->stream->end_input();
      bool connection_closed = false;
      process_(*c->stream, true, connection_closed, c->ssl);
      c->stream->flush();
      close(*c, /*send_close_notify=*/true);
    } else {
      // Idle past the keep-alive timeout (or stopping), a handshake not done in time, or a
      // lingering close whose client never closed.
      close(*c, /*send_close_notify=*/c->phase == Phase::kOpen);
    }
  }
}

}  // namespace gpuadmit::webhook
