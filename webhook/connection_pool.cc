#include "webhook/connection_pool.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <utility>

#include "engine/admission.h"
#include "engine/json_parse.h"
#include "webhook/memory_return.h"
#include "webhook/request_framing.h"

namespace gpuadmit::webhook {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kSweepInterval = std::chrono::milliseconds(100);
constexpr int kStoppingPollMs = 10;
constexpr auto kYouth = std::chrono::milliseconds(1000);

// A connection's state word: its generation (bumped on every close), and two flags.
constexpr std::uint32_t kOwned = 1;    // a thread is serving it; otherwise its socket is armed
constexpr std::uint32_t kPending = 2;  // an event arrived while it was owned
constexpr int kGenerationShift = 2;
// An epoll event carries the connection's address (user-space addresses fit in 48 bits on
// x86-64 and arm64) and the low 16 bits of its generation.
constexpr int kTokenShift = 48;
constexpr std::uint64_t kAddressMask = (std::uint64_t{1} << kTokenShift) - 1;
// The eventfd that hands woken connections to a pool thread: no connection has address 0.
constexpr std::uint64_t kWakeToken = 0;

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
  bool armed = false;              // registered in the epoll set
  bool close_after_write = false;  // kWriting: the response ends the connection
  std::size_t requests_left = 0;
  std::size_t charged = 0;           // budget bytes held for its buffer
  std::size_t parse_granted = 0;     // budget a waker took for answering its request
  std::size_t estimated_charge = 0;  // answer_charge of the buffered request, once known
  bool charge_known = false;
  // Read by the sweep and by eviction while another thread may own the connection, hence atomics.
  std::atomic<std::uint32_t> state{kOwned};
  std::atomic<std::int64_t> deadline_ns{0};
  std::atomic<std::int64_t> opened_ns{0};
  std::atomic<std::uint64_t> bytes_in{0};  // request bytes received since it was opened
  std::atomic<std::uint32_t> served{0};    // responses sent
  std::atomic<bool> queued{false};         // in waiters_ (written under waiters_mutex_)
  bool in_use = false;                     // under mutex_

  std::uint64_t token() const {
    const std::uint64_t generation = generation_of(state.load(std::memory_order_relaxed));
    return reinterpret_cast<std::uintptr_t>(this) | (generation & 0xffff) << kTokenShift;
  }
  void set_deadline(std::chrono::milliseconds from_now) {
    deadline_ns.store(now_ns() + ns(from_now), std::memory_order_relaxed);
  }
  // Lower is less progress: a connection that has been answered ranks above every one that has
  // not; one opened less than kYouth ago is assumed to be on its way (a good client between its
  // handshake and its request has sent nothing yet); then bytes received per second since it
  // opened.
  std::uint64_t progress(std::int64_t now) const {
    const std::int64_t age_ns = now - opened_ns.load(std::memory_order_relaxed);
    const bool answered = served.load(std::memory_order_relaxed) > 0;
    if (!answered && age_ns < ns(kYouth)) return std::uint64_t{1} << 40;
    const std::uint64_t age_ms =
        static_cast<std::uint64_t>(std::max<std::int64_t>(age_ns, 0)) / 1000000 + 1;
    const std::uint64_t rate = std::min<std::uint64_t>(
        bytes_in.load(std::memory_order_relaxed) * 1000 / age_ms, std::uint64_t{1} << 40);
    return (answered ? std::uint64_t{1} << 41 : 0) + rate + 1;
  }
};

ConnectionPool::ConnectionPool(SSL_CTX* ctx, ConnectionLimits limits, std::size_t threads,
                               ProcessRequest process, RefuseRequest refuse)
    : ctx_(ctx), limits_(limits), process_(std::move(process)), refuse_(std::move(refuse)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.u64 = kWakeToken;
  if (epoll_fd_ >= 0 && wake_fd_ >= 0 &&
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) != 0) {
    ::close(wake_fd_);
    wake_fd_ = -1;
  }
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ConnectionPool::~ConnectionPool() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void ConnectionPool::add(int fd) {
  if (!stopping_.load() && open_.load() >= limits_.max_connections) evict_one();
  const int flags = ::fcntl(fd, F_GETFL);
  int yes = 1;
  if (epoll_fd_ < 0 || wake_fd_ < 0 || stopping_.load() ||
      open_.load() >= limits_.max_connections || flags < 0 ||
      ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes) != 0) {
    ::close(fd);
    return;
  }
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
  c->fd = fd;
  if ((reinterpret_cast<std::uintptr_t>(c) & ~kAddressMask) != 0) {  // not on this platform
    close(*c, false);
    return;
  }
  // Owned by this thread (state kOwned since construction or the last close) until armed. The
  // TLS state and buffers are made by the pool thread that serves the first event: memory a
  // thread allocates is what it gives back when it goes idle (webhook/memory_return.h), and
  // this is cpp-httplib's accept thread.
  c->phase = Phase::kHandshake;
  c->armed = false;
  c->close_after_write = false;
  c->requests_left = limits_.max_requests;
  c->charged = 0;
  c->opened_ns.store(now_ns(), std::memory_order_relaxed);
  c->bytes_in.store(0, std::memory_order_relaxed);
  c->served.store(0, std::memory_order_relaxed);
  c->parse_granted = 0;
  c->charge_known = false;
  c->set_deadline(limits_.io_timeout);  // for the handshake
  if (park(*c, EPOLLIN) == Outcome::kParked && !release(*c)) run(*c);
}

bool ConnectionPool::start_tls(Connection& c) {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr || SSL_set_fd(ssl, c.fd) != 1) {
    if (ssl != nullptr) SSL_free(ssl);
    ERR_clear_error();
    return false;
  }
  // Whole records (and whatever follows) per recv; serve_open asks OpenSSL for bytes it holds
  // before it relies on the socket's readiness. A response retried after WANT_WRITE may sit at
  // another address by then.
  SSL_set_read_ahead(ssl, 1);
  SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_set_accept_state(ssl);
  c.ssl = ssl;
  c.stream.emplace(c.fd, ssl, limits_.io_timeout);
  return true;
}

bool ConnectionPool::evict_one() {
  const std::int64_t now = now_ns();
  while (true) {
    Connection* victim = nullptr;
    std::uint32_t victim_state = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::uint64_t least = UINT64_MAX;
      for (const std::unique_ptr<Connection>& owner : all_) {
        Connection* c = owner.get();
        if (!c->in_use) continue;
        const std::uint32_t s = c->state.load(std::memory_order_acquire);
        if ((s & kOwned) != 0) continue;
        const std::uint64_t p = c->progress(now);
        if (p < least) {
          least = p;
          victim = c;
          victim_state = s;
        }
      }
    }
    if (victim == nullptr) return false;
    if (claim(victim, generation_of(victim_state)) == nullptr) continue;  // taken meanwhile
    release_budget_of(*victim);
    close(*victim, /*send_close_notify=*/false);
    counters_.evicted.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
}

void ConnectionPool::set_stop_deadline(std::chrono::steady_clock::time_point deadline) {
  stop_deadline_ns_.store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count());
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
  // Memory a thread allocated and another thread freed goes back to the allocating thread's
  // heap, which gives it to the OS only when that thread collects: every idle thread collects
  // once after any connection has closed, not only after work of its own.
  bool busy_since_collect = false;
  std::uint64_t closes_seen = closes_.load(std::memory_order_relaxed);
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
    if (::epoll_wait(epoll_fd_, &event, 1, timeout_ms) <= 0) {
      // Idle for a sweep interval after work: what the work freed goes back to the OS.
      const std::uint64_t closes = closes_.load(std::memory_order_relaxed);
      if (busy_since_collect || closes != closes_seen) return_free_memory();
      busy_since_collect = false;
      closes_seen = closes;
      continue;
    }
    busy_since_collect = true;
    if (event.data.u64 == kWakeToken) {
      serve_scheduled();
      continue;
    }
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

ConnectionPool::Outcome ConnectionPool::wait_for_budget(Connection& c, std::size_t bytes,
                                                        bool parse) {
  {
    std::lock_guard<std::mutex> lock(waiters_mutex_);
    if (!c.queued.load(std::memory_order_relaxed)) {
      counters_.budget_waits.fetch_add(1, std::memory_order_relaxed);
      waiters_.push_back(
          {&c, generation_of(c.state.load(std::memory_order_relaxed)), bytes, parse});
      c.queued.store(true, std::memory_order_relaxed);
      waiting_.fetch_add(1, std::memory_order_release);
    }
  }
  const Outcome parked = park(c, 0);  // no events but errors: a waker schedules it
  // Budget given back between the failed charge and the queueing would wake no one: look now.
  // This connection is still owned here, so a grant for it turns into serving it again.
  wake_waiters();
  return parked;
}

void ConnectionPool::wake_waiters() {
  if (waiting_.load(std::memory_order_acquire) == 0) return;
  std::vector<Connection*> woken;
  {
    std::lock_guard<std::mutex> lock(waiters_mutex_);
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      const Waiter w = *it;
      bool granted = charge(w.bytes, /*buffer=*/!w.parse);
      if (granted && w.parse) parsing_.fetch_add(1);
      std::size_t none = 0;
      if (!granted && w.parse && parsing_.compare_exchange_strong(none, 1)) {
        counters_.budget_used.fetch_add(w.bytes);  // alone, over the budget (see answer)
        budget_in_use_changed();
        granted = true;
      }
      if (!granted) {
        ++it;
        continue;
      }
      it = waiters_.erase(it);
      waiting_.fetch_sub(1, std::memory_order_release);
      // In the queue, the connection is still the one queued: close() leaves it first.
      w.c->queued.store(false, std::memory_order_relaxed);
      Connection* c = claim(w.c, w.generation);
      if (c == nullptr) {
        // Owned by a thread (marked pending: it serves the connection again and charges for
        // itself then): the grant goes back.
        counters_.budget_used.fetch_sub(w.bytes);
        if (!w.parse) buffers_used_.fetch_sub(w.bytes);
        if (w.parse) parsing_.fetch_sub(1);
        budget_in_use_changed();
        continue;
      }
      if (w.parse) {
        c->parse_granted = w.bytes;
      } else {
        c->charged += w.bytes;
      }
      woken.push_back(c);
    }
  }
  for (Connection* c : woken) schedule(*c);
}

void ConnectionPool::leave_queue(Connection& c) {
  if (!c.queued.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(waiters_mutex_);
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->c == &c) {
      waiters_.erase(it);
      waiting_.fetch_sub(1, std::memory_order_release);
      break;
    }
  }
  c.queued.store(false, std::memory_order_relaxed);
}

void ConnectionPool::schedule(Connection& c) {
  {
    std::lock_guard<std::mutex> lock(ready_mutex_);
    ready_.push_back(&c);
  }
  signal_wake();
}

void ConnectionPool::signal_wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

// The eventfd is armed one-shot: one thread at a time takes a woken connection, and re-signals
// it for the next one before serving its own.
void ConnectionPool::serve_scheduled() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof count);
  Connection* c = nullptr;
  bool more = false;
  {
    std::lock_guard<std::mutex> lock(ready_mutex_);
    if (!ready_.empty()) {
      c = ready_.front();
      ready_.pop_front();
    }
    more = !ready_.empty();
  }
  if (more) signal_wake();
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.u64 = kWakeToken;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, wake_fd_, &event);
  if (c != nullptr) run(*c);
}

namespace {

// Adds `bytes` to `used` unless that passes `limit`.
bool add_within(std::atomic<std::size_t>& used, std::size_t bytes, std::size_t limit) {
  std::size_t now = used.load(std::memory_order_relaxed);
  while (true) {
    if (now + bytes > limit) return false;
    if (used.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed)) return true;
  }
}

}  // namespace

bool ConnectionPool::charge(std::size_t bytes, bool buffer) {
  if (buffer && !add_within(buffers_used_, bytes, limits_.memory_budget / kBufferShare)) {
    return false;
  }
  if (add_within(counters_.budget_used, bytes, limits_.memory_budget)) {
    budget_in_use_changed();
    return true;
  }
  if (buffer) buffers_used_.fetch_sub(bytes, std::memory_order_relaxed);
  return false;
}

void ConnectionPool::refund(std::size_t bytes, bool buffer) {
  if (bytes == 0) return;
  if (buffer) buffers_used_.fetch_sub(bytes, std::memory_order_relaxed);
  counters_.budget_used.fetch_sub(bytes, std::memory_order_relaxed);
  budget_in_use_changed();
  wake_waiters();
}

// While any budget is in use, large requests are buffered or answered: the memory they free goes
// back to the OS at once (webhook/memory_return.h). Checked under a lock so that the last change
// wins.
void ConnectionPool::budget_in_use_changed() {
  const bool in_use = counters_.budget_used.load(std::memory_order_relaxed) > 0;
  if (in_use == prompt_return_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(prompt_mutex_);
  const bool now = counters_.budget_used.load(std::memory_order_relaxed) > 0;
  if (now == prompt_return_.load(std::memory_order_relaxed)) return;
  prompt_return_.store(now, std::memory_order_relaxed);
  set_prompt_memory_return(now);
}

std::size_t ConnectionPool::charge_buffer(Connection& c, std::size_t capacity) {
  const std::size_t need = capacity > kConnectionAllowance ? capacity - kConnectionAllowance : 0;
  if (need <= c.charged) return 0;
  if (!charge(need - c.charged, /*buffer=*/true)) return need - c.charged;
  c.charged = need;
  return 0;
}

void ConnectionPool::settle_buffer(Connection& c) {
  const std::size_t capacity = c.stream->capacity();
  const std::size_t need = capacity > kConnectionAllowance ? capacity - kConnectionAllowance : 0;
  if (need < c.charged) {
    const std::size_t surplus = c.charged - need;
    c.charged = need;
    refund(surplus, /*buffer=*/true);
  }
}

void ConnectionPool::release_budget_of(Connection& c) {
  const std::size_t buffer = c.charged, granted = c.parse_granted;
  c.charged = 0;
  c.parse_granted = 0;
  if (granted > 0) parsing_.fetch_sub(1);
  refund(granted, /*buffer=*/false);
  refund(buffer, /*buffer=*/true);
}

ConnectionPool::Outcome ConnectionPool::close(Connection& c, bool send_close_notify) {
  if (send_close_notify && c.phase == Phase::kOpen) SSL_shutdown(c.ssl);  // not awaited
  leave_queue(c);
  release_budget_of(c);
  c.stream.reset();
  if (c.ssl != nullptr) SSL_free(c.ssl);
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
  closes_.fetch_add(1, std::memory_order_relaxed);
  return Outcome::kClosed;
}

ConnectionPool::Outcome ConnectionPool::serve(Connection& c) {
  switch (c.phase) {
    case Phase::kHandshake: {
      if (c.ssl == nullptr && !start_tls(c)) return close(c, /*send_close_notify=*/false);
      const int rc = SSL_accept(c.ssl);
      if (rc == 1) {
        c.phase = Phase::kOpen;
        c.set_deadline(limits_.keep_alive_timeout);  // until a request starts
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
    case Phase::kWriting:
      if (std::optional<Outcome> done = after_sent(c)) return *done;
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

// long: one connection's read loop (frame, answer, read) as a state machine whose cases share
// the loop's state (may_read, the buffered bytes, the deadline).
ConnectionPool::Outcome ConnectionPool::serve_open(Connection& c) {
  using Action = RequestFraming::Action;
  const std::size_t limit = kMaxHeaderBytes + limits_.max_body;
  TlsStream& stream = *c.stream;
  leave_queue(c);  // served (an error event, the sweep): it asks again if it still needs budget
  // Woken by the socket: read it. After a response, read only if OpenSSL holds bytes; otherwise
  // re-arming reports a next request that is already here, without a recv that finds nothing.
  bool may_read = true;
  while (true) {
    const std::string_view buffered = stream.buffered();
    const RequestFraming framing =
        buffered.empty() ? RequestFraming{} : frame_request(buffered, limits_.max_body);
    if (framing.action == Action::kRefuse) {
      counters_.refused_framing.fetch_add(1, std::memory_order_relaxed);
      if (std::optional<Outcome> done = refuse(c, framing.status, framing.message)) return *done;
      return close(c, /*send_close_notify=*/true);
    }
    if (framing.action == Action::kContinue) {
      stream.defuse_header(framing.expect_at);
      if (framing.interim) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        stream.write(kContinue.data(), kContinue.size());
        if (stream.flush_some() == TlsStream::Flush::kFailed) return close(c, false);
      }
      continue;  // framed again, now as a request whose body is on its way
    }
    if (framing.action == Action::kReady || framing.action == Action::kHandOver) {
      if (std::optional<Outcome> done = answer(c, framing)) return *done;
      stream.compact();
      settle_buffer(c);
      const bool idle = stream.buffered().empty();
      if (idle && stopping_.load()) return close(c, /*send_close_notify=*/true);
      // A pipelined request already here starts its own deadline.
      c.set_deadline(idle ? limits_.keep_alive_timeout : limits_.request_timeout);
      may_read = stream.tls_pending();
      continue;
    }
    if (!may_read && !stream.tls_pending()) return park(c, EPOLLIN);
    // Once the headers say how long the request is, its buffer is made that size at once.
    const std::size_t read_limit = framing.size > 0 ? framing.size : limit;
    if (framing.size > stream.capacity()) {
      if (const std::size_t missing = charge_buffer(c, framing.size)) {
        return wait_for_budget(c, missing, /*parse=*/false);
      }
      stream.reserve_total(framing.size);
    }
    if (const std::size_t missing = charge_buffer(c, stream.capacity_for_read(read_limit))) {
      return wait_for_budget(c, missing, /*parse=*/false);
    }
    const bool starting = buffered.empty();
    switch (stream.read_some(read_limit)) {
      case TlsStream::Fill::kData:
        c.bytes_in.fetch_add(stream.buffered().size() - buffered.size(), std::memory_order_relaxed);
        // The whole request's deadline starts with its first byte, and is not extended.
        if (starting) c.set_deadline(limits_.request_timeout);
        may_read = true;
        break;
      case TlsStream::Fill::kFull:
        // At the limit and still not a whole request: the framing refuses it on the next turn
        // (its headers are over kMaxHeaderBytes or its body over max_body).
        if (std::optional<Outcome> done = refuse(c, 413, "request too large")) return *done;
        return close(c, /*send_close_notify=*/true);
      case TlsStream::Fill::kWouldBlock:
        if (stream.buffered().empty()) {
          if (stopping_.load()) return close(c, /*send_close_notify=*/true);
          c.set_deadline(limits_.keep_alive_timeout);
        }
        return park(c, EPOLLIN);
      case TlsStream::Fill::kEnd:
        // The client ended its side mid-request: nothing will complete it.
        return close(c, /*send_close_notify=*/false);
      case TlsStream::Fill::kFailed:
        return close(c, /*send_close_notify=*/false);
    }
  }
}

bool ConnectionPool::take_parse_charge(Connection& c, std::size_t bytes) {
  if (c.parse_granted > 0) {
    c.parse_granted = 0;  // granted while it waited, and counted in parsing_ then
    return true;
  }
  if (charge(bytes, /*buffer=*/false)) {
    parsing_.fetch_add(1);
    return true;
  }
  std::size_t none = 0;
  if (!parsing_.compare_exchange_strong(none, 1)) return false;
  counters_.budget_used.fetch_add(bytes);
  budget_in_use_changed();
  return true;
}

std::optional<ConnectionPool::Outcome> ConnectionPool::answer(Connection& c,
                                                              const RequestFraming& framing) {
  // A large review's JSON tree takes many times its text while it is answered (answer_charge).
  // It waits its turn, unless no other large review is being answered: then it goes, even over
  // the budget, so that buffered requests filling the budget can never keep every one waiting.
  // The estimate is made once per request, however often it waits.
  if (!c.charge_known) {
    c.estimated_charge = answer_charge(c, framing);
    c.charge_known = true;
  }
  const std::size_t charge = c.estimated_charge;
  if (charge > 0 && !take_parse_charge(c, charge)) {
    return wait_for_budget(c, charge, /*parse=*/true);
  }
  c.charge_known = false;  // the next request is estimated anew
  bool connection_closed = false;
  const bool ok = process_(*c.stream, c.requests_left <= 1, connection_closed, c.ssl);
  if (charge > 0) {
    parsing_.fetch_sub(1);
    refund(charge, /*buffer=*/false);
  }
  c.served.fetch_add(1, std::memory_order_relaxed);
  if (!ok) {
    c.stream->flush_some();
    return close(c, /*send_close_notify=*/false);
  }
  return finish_response(c, connection_closed);
}

std::size_t ConnectionPool::answer_charge(const Connection& c,
                                          const RequestFraming& framing) const {
  if (framing.action != RequestFraming::Action::kReady || framing.size <= kConnectionAllowance) {
    return 0;
  }
  const std::string_view body =
      c.stream->buffered().substr(framing.header_size, framing.size - framing.header_size);
  return kAnswerFactor * parse_json_peak_bytes(body, kMaxReviewDepth);
}

std::optional<ConnectionPool::Outcome> ConnectionPool::refuse(Connection& c, int status,
                                                              std::string_view message) {
  refuse_(*c.stream, status, message);
  c.stream->request_close();
  return finish_response(c, /*connection_closed=*/true);
}

std::optional<ConnectionPool::Outcome> ConnectionPool::finish_response(Connection& c,
                                                                       bool connection_closed) {
  c.close_after_write = connection_closed || --c.requests_left == 0;
  return after_sent(c);
}

std::optional<ConnectionPool::Outcome> ConnectionPool::after_sent(Connection& c) {
  TlsStream& stream = *c.stream;
  switch (stream.flush_some()) {
    case TlsStream::Flush::kFailed:
      return close(c, /*send_close_notify=*/false);
    case TlsStream::Flush::kWouldBlock:
      // The client is not reading: no thread waits for it. Resumed on EPOLLOUT.
      if (c.phase != Phase::kWriting) c.set_deadline(limits_.io_timeout);
      c.phase = Phase::kWriting;
      return park(c, EPOLLOUT);
    case TlsStream::Flush::kDone:
      break;
  }
  c.phase = Phase::kOpen;
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
  if (c.close_after_write) return close(c, /*send_close_notify=*/true);
  return std::nullopt;
}

void ConnectionPool::sweep(bool stopping) {
  const std::int64_t now = now_ns();
  const bool past_stop_deadline = stopping && now >= stop_deadline_ns_.load();
  wake_waiters();  // a backstop: budget is handed on when it is given back
  struct Claimed {
    Connection* c;
    bool expired;
  };
  std::vector<Claimed> claimed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Connection>& owner : all_) {
      Connection* c = owner.get();
      if (!c->in_use) continue;
      const std::uint32_t s = c->state.load(std::memory_order_acquire);
      if ((s & kOwned) != 0) continue;
      const bool expired = now >= c->deadline_ns.load(std::memory_order_relaxed);
      if ((expired || stopping) && claim(c, generation_of(s))) {
        claimed.push_back({c, expired || past_stop_deadline});
      }
    }
  }
  for (const auto& [c, expired] : claimed) {
    const bool receiving = c->phase == Phase::kOpen && !c->stream->buffered().empty();
    const bool sending = c->phase == Phase::kWriting;
    if (!expired && (receiving || sending || c->phase == Phase::kLingering)) {
      // A request still arriving (or waiting for the budget: a waker schedules it), or a
      // response still being read, may finish.
      if (!release(*c)) run(*c);
    } else if (receiving && !past_stop_deadline) {
      // A request that did not arrive whole in time: refused, then the connection closes.
      counters_.deadline_closed.fetch_add(1, std::memory_order_relaxed);
      refuse_(*c->stream, 408, "request not received in time");
      c->stream->flush_some();
      close(*c, /*send_close_notify=*/true);
    } else {
      // Idle past the keep-alive timeout (or stopping), a handshake not done in time, a
      // response not read in time, a lingering close whose client never closed; or anything
      // left at the stop deadline.
      if (c->phase == Phase::kHandshake && expired) {
        counters_.deadline_closed.fetch_add(1, std::memory_order_relaxed);
      }
      if (past_stop_deadline && (receiving || sending)) forced_.store(true);
      close(*c, /*send_close_notify=*/c->phase == Phase::kOpen);
    }
  }
}

}  // namespace gpuadmit::webhook
