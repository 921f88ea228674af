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
// connection without sleeping. A request is handed to
// cpp-httplib only once all of it is buffered (webhook/request_framing.h), so a slow or silent
// client holds no thread either; deadlines (handshake, request, idle keep-alive, lingering
// close) are enforced by a sweep every 100 ms.
//
// cpp-httplib still accepts connections (its listen loop hands each socket to the server's
// `process_and_close_socket`, which calls `add`) and still parses, routes and answers requests.

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "webhook/tls_connection.h"

namespace gpuadmit::webhook {

struct ConnectionLimits {
  std::chrono::milliseconds io_timeout{5000};           // handshake; a request's next bytes
  std::chrono::milliseconds keep_alive_timeout{10000};  // idle between requests
  std::chrono::milliseconds linger{1000};               // draining an unread body before closing
  std::size_t max_requests = 1000000;                   // per connection
  std::size_t max_body = 3 * 1024 * 1024;               // the server's --max-body
  // Open connections; one more is closed at once. Each costs ~40 KiB (buffers, TLS state), so
  // this bounds what a flood of idle connections can take (~40 MiB); API servers keep a few.
  std::size_t max_connections = 1024;
};

class ConnectionPool {
 public:
  // Starts `threads` threads. `ctx` and `process` must outlive the pool.
  ConnectionPool(SSL_CTX* ctx, ConnectionLimits limits, std::size_t threads,
                 ProcessRequest process);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Takes an accepted socket (closed by the pool).
  void add(int fd);
  // Graceful stop, once no new connection is added: idle connections are closed at once;
  // requests being received or served finish (within their deadlines), and their connections
  // close after the response. Returns when every connection is closed and the threads joined.
  void stop();

 private:
  struct Connection;
  enum class Phase : std::uint8_t { kHandshake, kOpen, kLingering };
  enum class Outcome : std::uint8_t { kParked, kClosed };

  void work();
  // The connection an epoll event names, now owned by the caller; null when it was closed or
  // reused since, or when another thread owns it (which then serves it again: see release).
  static Connection* claim(Connection* c, std::uint32_t generation);
  // Gives up ownership after re-arming. False when an event arrived meanwhile: serve again.
  static bool release(Connection& c);
  void run(Connection& c);
  Outcome serve(Connection& c);
  Outcome serve_open(Connection& c);
  // Re-arms the socket for `events`; the caller still owns the connection.
  Outcome park(Connection& c, std::uint32_t events);
  Outcome close(Connection& c, bool send_close_notify);
  // Outcome of cpp-httplib answering the buffered request; nullopt when the connection stays
  // open for another request.
  std::optional<Outcome> answer(Connection& c);
  void sweep(bool stopping);

  SSL_CTX* ctx_;
  const ConnectionLimits limits_;
  const ProcessRequest process_;
  int epoll_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> next_sweep_ns_{0};
  std::atomic<std::size_t> open_{0};

  // Connection objects are reused, never freed while the pool lives: an event dequeued by one
  // thread may name a connection another thread has just closed, and its generation tells.
  std::mutex mutex_;  // all_ and free_
  std::vector<std::unique_ptr<Connection>> all_;
  std::vector<Connection*> free_;

  std::vector<std::thread> threads_;
  std::once_flag stopped_;
};

}  // namespace gpuadmit::webhook
