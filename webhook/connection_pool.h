#pragma once
// The accepted TLS connections of the webhook, served by a few threads sharing one epoll set.
//
// cpp-httplib 0.11.4 serves each connection on a pool thread of its own for the connection's
// whole life: every request wakes the thread that sleeps on its socket, and with more
// connections than cores the threads also take turns on the caches. Measured on 2 cores with 8
// kept-alive connections: ~1.1 context switches per request and the review's engine time ~70%
// above what it is alone. Here, as in nginx, a connection holds no thread while it waits: its
// socket sits in an epoll set (EPOLLONESHOT, and an atomic owner flag, so one thread at a time
// serves it, without a lock), and a thread that finishes a request takes the next ready
// connection without sleeping.
//
// Hostile clients (SPEC §9: memory bounded under any input, slow clients never hang the server):
//   - a request is handed on only once all of it is buffered (webhook/request_framing.h), and a
//     response the client does not read waits for EPOLLOUT, so no thread waits on a client;
//     "Expect: 100-continue" is answered here;
//   - deadlines: the handshake, a whole request from its first byte (not per read: a client
//     sending a byte a second does not extend it), idle keep-alive, lingering close; enforced by
//     a sweep every 100 ms;
//   - one memory budget for request bytes buffered past a small per-connection allowance and
//     for large reviews being parsed: when it is spent, connections that need more stop being
//     read (TCP holds the rest) and wait in a queue; budget given back is handed to them in
//     their order, each woken on a pool thread (an eventfd in the epoll set);
//   - when every connection slot is taken, the connection that has made the least progress is
//     closed to make room for the new one;
//   - a thread that goes idle gives free memory back to the OS (webhook/memory_return.h).
//
// cpp-httplib still accepts connections (webhook/httplib_bridge.h hands each socket to `add`).

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "webhook/request_framing.h"
#include "webhook/tls_connection.h"

namespace gpuadmit::webhook {

struct ConnectionLimits {
  std::chrono::milliseconds io_timeout{5000};  // the TLS handshake; a response not read
  // A whole request, from its first byte to its last. The API server's webhook timeout is 10 s
  // by default (30 s at most): a review that takes longer to arrive is answered to no one.
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds keep_alive_timeout{10000};  // idle between requests
  std::chrono::milliseconds linger{1000};               // draining an unread body before closing
  std::size_t max_requests = 1000000;                   // per connection
  std::size_t max_body = 3 * 1024 * 1024;               // the server's --max-body
  // Open connections; past it, the least progressed one makes room. Each costs ~40 KiB (TLS
  // state, its first read buffer) and at most kConnectionAllowance more unbudgeted. Under 1024
  // so that the process's descriptors stay below FD_SETSIZE: Debian's cpp-httplib is built
  // without CPPHTTPLIB_USE_POLL, and the metrics listener's connections go through select().
  std::size_t max_connections = 1000;
  // The memory budget (--memory-budget): request bytes buffered past each connection's
  // allowance (at most 1/kBufferShare of it), plus, while a request over the allowance is being
  // answered, kAnswerFactor times the peak its JSON takes to parse (parse_json_peak_bytes).
  std::size_t memory_budget = 96u << 20;
};

// Buffer bytes each connection may hold without drawing on the budget, and requests up to this
// size are answered without a charge: the API server's reviews are a few KiB.
inline constexpr std::size_t kConnectionAllowance = 64 * 1024 + 2048;
// Bytes buffered ahead of what can be answered are worth little: they may hold a third of the
// budget, so that two thirds are always there for answering.
inline constexpr std::size_t kBufferShare = 3;
// Answering a review: its parsed tree (parse_json_peak_bytes, which also covers freeing it), and
// as much again for evaluating it and writing the answer. Measured (glibc, peak bytes held): a
// 2.9 MB Deployment UPDATE 1.33 times the parse bound; a 1.6 MB pod of 40,000 CPU containers,
// each given an env var (a 5.7 MB answer), 3.9 times — that shape then overdraws the budget
// twice over, which the budget's headroom under the chart's 256 MiB limit holds
// (docs/hostile-clients.md).
inline constexpr std::size_t kAnswerFactor = 2;

// Answers a request the pool refuses itself (framing limits, deadlines) and asks for the
// connection to be closed after it: `status` with a one-line JSON `message`.
using RefuseRequest = std::function<void(TlsStream& stream, int status, std::string_view message)>;

// What the pool has seen, for the metrics and the attack tests.
struct PoolCounters {
  std::atomic<std::uint64_t> evicted{0};          // closed to make room for a new connection
  std::atomic<std::uint64_t> deadline_closed{0};  // handshake or request deadline passed
  std::atomic<std::uint64_t> budget_waits{0};     // a connection paused for the memory budget
  std::atomic<std::uint64_t> refused_framing{0};  // refused by request_framing's limits
  std::atomic<std::size_t> budget_used{0};        // bytes of the budget in use now
};

class ConnectionPool {
 public:
  // Starts `threads` threads. `ctx`, `process` and `refuse` must outlive the pool.
  ConnectionPool(SSL_CTX* ctx, ConnectionLimits limits, std::size_t threads, ProcessRequest process,
                 RefuseRequest refuse);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Takes an accepted socket (closed by the pool).
  void add(int fd);
  // Graceful stop, once no new connection is added: idle connections are closed at once;
  // requests being received or served finish (within their deadlines), and their connections
  // close after the response. At `deadline`, whatever is left is closed. Returns when every
  // connection is closed and the threads joined. Call set_stop_deadline first to change it
  // (default: none).
  void stop();
  void set_stop_deadline(std::chrono::steady_clock::time_point deadline);
  // False when stop() closed a connection with a request unfinished at the deadline.
  bool stopped_cleanly() const { return !forced_.load(); }
  const PoolCounters& counters() const { return counters_; }

 private:
  struct Connection;
  enum class Phase : std::uint8_t { kHandshake, kOpen, kWriting, kLingering };
  enum class Outcome : std::uint8_t { kParked, kClosed };

  void work();
  // The connection an epoll event names, now owned by the caller; null when it was closed or
  // reused since, or when another thread owns it (which then serves it again: see release).
  static Connection* claim(Connection* c, std::uint32_t generation);
  // Gives up ownership after re-arming. False when an event arrived meanwhile: serve again.
  static bool release(Connection& c);
  void run(Connection& c);
  Outcome serve(Connection& c);
  // The connection's SSL and stream, on the thread that serves its first event.
  bool start_tls(Connection& c);
  Outcome serve_open(Connection& c);
  // Re-arms the socket for `events`; the caller still owns the connection.
  Outcome park(Connection& c, std::uint32_t events);
  // Parks without reading until `bytes` of the budget are handed to it (wake_waiters); `parse`:
  // for answering its buffered request, which may go over the budget when no other large
  // review is being answered.
  Outcome wait_for_budget(Connection& c, std::size_t bytes, bool parse);
  // Hands budget that has become free to waiting connections, in their order (first fit), and
  // schedules each on a pool thread.
  void wake_waiters();
  void leave_queue(Connection& c);
  // A connection owned by the caller, run next by whichever pool thread takes the eventfd.
  void schedule(Connection& c);
  void signal_wake();
  void serve_scheduled();
  // The budget for answering a large request: granted by a waker, taken, or (when no other large
  // review is being answered) taken over the budget. False: wait.
  bool take_parse_charge(Connection& c, std::size_t parse_charge);
  Outcome close(Connection& c, bool send_close_notify);
  // Answers the buffered request `framing` describes (kHandOver: before its body); nullopt when
  // the connection stays open for another request.
  std::optional<Outcome> answer(Connection& c, const RequestFraming& framing);
  // The budget answering it takes: 0 for a request within the connection's allowance.
  std::size_t answer_charge(const Connection& c, const RequestFraming& framing) const;
  std::optional<Outcome> refuse(Connection& c, int status, std::string_view message);
  // After a response: sends it (or waits to), then keeps, lingers on or closes the connection.
  std::optional<Outcome> finish_response(Connection& c, bool connection_closed);
  std::optional<Outcome> after_sent(Connection& c);
  // The memory budget: false when `bytes` more do not fit (for a `buffer`, nor in its share).
  bool charge(std::size_t bytes, bool buffer);
  // Gives bytes back and hands them to waiting connections.
  void refund(std::size_t bytes, bool buffer);
  void budget_in_use_changed();
  // Grows the connection's charge to what reading into a buffer of `capacity` bytes needs:
  // 0 when done, else the bytes that did not fit.
  std::size_t charge_buffer(Connection& c, std::size_t capacity);
  void settle_buffer(Connection& c);
  void release_budget_of(Connection& c);
  // Closes the least progressed connection not being served; false when there is none.
  bool evict_one();
  void sweep(bool stopping);

  SSL_CTX* ctx_;
  const ConnectionLimits limits_;
  const ProcessRequest process_;
  const RefuseRequest refuse_;
  PoolCounters counters_;
  std::atomic<std::int64_t> stop_deadline_ns_{INT64_MAX};
  std::atomic<bool> forced_{false};
  std::atomic<std::size_t> parsing_{0};       // large reviews being answered now
  std::atomic<std::size_t> buffers_used_{0};  // the buffers' part of budget_used
  std::mutex prompt_mutex_;
  std::atomic<bool> prompt_return_{false};  // set_prompt_memory_return(true) is in force

  // Connections waiting for the budget, in arrival order (first fit when budget comes back).
  struct Waiter {
    Connection* c;
    std::uint32_t generation;
    std::size_t bytes;
    bool parse;
  };
  std::mutex waiters_mutex_;
  std::deque<Waiter> waiters_;
  std::atomic<std::size_t> waiting_{0};
  // Woken waiters, owned, to be run by the pool thread that takes the eventfd's event.
  int wake_fd_ = -1;
  std::mutex ready_mutex_;
  std::deque<Connection*> ready_;
  int epoll_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> next_sweep_ns_{0};
  std::atomic<std::size_t> open_{0};
  std::atomic<std::uint64_t> closes_{0};

  // Connection objects are reused, never freed while the pool lives: an event dequeued by one
  // thread may name a connection another thread has just closed, and its generation tells.
  std::mutex mutex_;  // all_ and free_
  std::vector<std::unique_ptr<Connection>> all_;
  std::vector<Connection*> free_;

  std::vector<std::thread> threads_;
  std::once_flag stopped_;
};

}  // namespace gpuadmit::webhook
