// Hostile clients against the real binary (issue 15's table, SPEC §9: memory bounded under any
// input, slow clients never hang the server). Each case starts a `gpuadmit serve` with its
// defaults, runs one attack from this process against 127.0.0.1 for a bounded time while good
// clients send reviews, and asserts:
//   - peak RSS (VmHWM) ≤ 256 MiB during the attack, and RSS back ≤ 48 MiB within 10 s after it;
//   - ≥ 99% of good requests answered correctly, with p99 ≤ 100 ms (≤ 1 s for the attacks on
//     connection slots, whose good clients open a connection per request).
// Latency limits are those of an idle 2-core machine. A CI machine may be busy, so by default
// each limit is multiplied by the machine's slowdown now: how much longer than its CPU time a
// thread of this process takes to spin for 100 ms of CPU just before the attack (1 when it has a
// core to itself) — a stall (a request waiting for a deadline) still fails by far.
// GPUADMIT_ATTACK_STRICT=1 (scripts/attack.sh) asserts the limits as written. Memory limits are
// never scaled.
// GPUADMIT_ATTACK_SCALE (default 1) multiplies every count and duration: scripts/attack.sh 10
// runs the same attacks ten times longer and bigger. Every case appends one line of numbers to
// attack-results.txt in the working directory (scripts/test.sh prints it).

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <latch>
#include <mutex>
#include <string_view>
#include <thread>

#include "engine/json.h"
#include "tests/webhook/support.h"

namespace attack_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr double kPeakLimitMiB = 256;
constexpr double kIdleLimitMiB = 48;

bool strict() {
  const char* s = std::getenv("GPUADMIT_ATTACK_STRICT");
  return s != nullptr && std::string_view(s) == "1";
}

int scale() {
  const char* s = std::getenv("GPUADMIT_ATTACK_SCALE");
  const int n = s == nullptr ? 1 : std::atoi(s);
  return std::clamp(n, 1, 100);
}

// The test process holds a socket per attacking connection.
void raise_fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 65536);
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// User and system CPU seconds a process has used (/proc/PID/stat utime + stime).
double cpu_seconds_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// VmHWM and VmRSS of a process, in MiB.
struct Rss {
  double peak = -1, now = -1;
};
Rss rss_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  Rss r;
  std::string key;
  long kib = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    fields >> key >> kib;
    if (key == "VmHWM:") r.peak = kib / 1024.0;
    if (key == "VmRSS:") r.now = kib / 1024.0;
  }
  return r;
}

// One TLS connection of an attacker: no certificate check, one shared context.
class RawTls {
 public:
  static SSL_CTX* context() {
    static SSL_CTX* ctx = [] {
      SSL_CTX* c = SSL_CTX_new(TLS_client_method());
      SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
      return c;
    }();
    return ctx;
  }
  RawTls() = default;
  RawTls(const RawTls&) = delete;
  RawTls& operator=(const RawTls&) = delete;
  ~RawTls() { close(); }

  // TCP connect and, unless `handshake` is false, the TLS handshake.
  bool open(int port, bool handshake = true, int timeout_ms = 2000) {
    close();
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return false;
    if (!handshake) return true;
    ssl_ = SSL_new(context());
    SSL_set_fd(ssl_, fd_);
    const bool ok = SSL_connect(ssl_) == 1;
    ERR_clear_error();
    return ok;
  }
  // Sends all of `bytes` or fails (a closed connection, or the send timeout: the server is not
  // reading). A failed connection is not written to again.
  bool send(std::string_view bytes) {
    if (ssl_ == nullptr || failed_) return false;
    const int n = SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
    ERR_clear_error();
    if (n <= 0) failed_ = true;
    return n > 0;
  }
  void set_send_timeout(int ms) {
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  // Drains whatever the server has sent, without waiting.
  std::string drain() {
    std::string out;
    if (ssl_ == nullptr) return out;
    char buf[4096];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (SSL_pending(ssl_) == 0 && ::poll(&p, 1, 0) <= 0) break;
      const int n = SSL_read(ssl_, buf, sizeof buf);
      ERR_clear_error();
      if (n <= 0) {
        failed_ = true;
        break;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
  bool failed() const { return failed_; }
  void close() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    ssl_ = nullptr;
    fd_ = -1;
    failed_ = false;
  }

 private:
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  bool failed_ = false;
};

// Good clients: reviews sent every `interval` while the attack runs, each answer checked.
class GoodClients {
 public:
  struct Result {
    int sent = 0, ok = 0;
    double p50_ms = 0, p99_ms = 0, max_ms = 0;
  };
  // `fresh`: a new connection (and handshake) per request, as a client after the attack on
  // connection slots must get one.
  GoodClients(int port, std::string ca, int clients, bool fresh, milliseconds interval)
      : port_(port), ca_(std::move(ca)), fresh_(fresh), interval_(interval) {
    for (int i = 0; i < clients; ++i) threads_.emplace_back([this, i] { loop(i); });
  }
  Result stop() {
    stop_.store(true);
    for (std::thread& t : threads_) t.join();
    Result r;
    std::sort(latencies_ms_.begin(), latencies_ms_.end());
    r.sent = sent_;
    r.ok = ok_;
    if (!latencies_ms_.empty()) {
      r.p50_ms = latencies_ms_[latencies_ms_.size() / 2];
      r.p99_ms = latencies_ms_[std::min(latencies_ms_.size() - 1,
                                        static_cast<std::size_t>(latencies_ms_.size() * 0.99))];
      r.max_ms = latencies_ms_.back();
    }
    return r;
  }

 private:
  void loop(int id) {
    TlsClient::Options options;
    options.ca_path = ca_;
    options.timeout_ms = 5000;
    TlsClient kept;
    bool kept_open = false;
    for (int n = 0; !stop_.load(); ++n) {
      const std::string uid = "good-" + std::to_string(id) + "-" + std::to_string(n);
      const std::string body = admission_review(uid, kGpuPod);
      const auto start = Clock::now();
      TlsClient fresh;
      TlsClient& client = fresh_ ? fresh : kept;
      bool connected = !fresh_ && kept_open;
      if (!connected) connected = client.connect(port_, options).empty();
      bool ok = false;
      if (connected) {
        auto res = client.request("POST", "/mutate", body);
        ok = res && res->status == 200 &&
             res->body.find("\"uid\":\"" + uid + "\"") != std::string::npos;
      }
      kept_open = ok;
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++sent_;
        if (ok) ++ok_;
        latencies_ms_.push_back(ms);
      }
      std::this_thread::sleep_for(interval_);
    }
  }

  int port_;
  std::string ca_;
  bool fresh_;
  milliseconds interval_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  int sent_ = 0, ok_ = 0;
  std::vector<double> latencies_ms_;
  std::vector<std::thread> threads_;
};

// A server with its defaults, the way the attack finds it.
struct Target {
  TempDir dir;
  std::optional<ServerProcess> server;
  explicit Target(std::vector<std::string> args = {}) {
    raise_fd_limit();
    generate_certs(dir.path());
    server.emplace(dir.path(), args);
    REQUIRE(server->wait_ready());
  }
  int port() const { return server->port(); }
  std::string ca() const { return dir / "ca.crt"; }
  pid_t pid() const { return server->pid(); }
};

struct Outcome {
  GoodClients::Result good;
  Rss during;
  double idle_after_mib = -1;
  double idle_after_s = -1;
  double slowdown = 1;  // latency limits are multiplied by it (see the top of this file)
};

// How much slower than idle the machine runs now: wall time over CPU time of 100 ms of spinning.
double slowdown() {
  if (strict()) return 1;
  auto cpu_now = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
  };
  const auto wall_start = Clock::now();
  const double cpu_start = cpu_now();
  volatile std::uint64_t sink = 0;
  while (cpu_now() - cpu_start < 0.1) {
    for (int i = 0; i < 10000; ++i) sink = sink + i;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
  return std::clamp(wall / (cpu_now() - cpu_start), 1.0, 100.0);
}

// Runs `attack` (which returns when its time is up) with good clients beside it, then waits up
// to 10 s for RSS to come back.
Outcome measure(Target& target, bool fresh_good, const std::function<void()>& attack) {
  Outcome o;
  o.slowdown = slowdown();
  GoodClients good(target.port(), target.ca(), 2, fresh_good, milliseconds(20));
  attack();
  o.good = good.stop();
  o.during = rss_of(target.pid());
  const auto after = Clock::now();
  while (true) {
    const double now = rss_of(target.pid()).now;
    const double waited = std::chrono::duration<double>(Clock::now() - after).count();
    if (now <= kIdleLimitMiB || waited > 10) {
      o.idle_after_mib = now;
      o.idle_after_s = waited;
      break;
    }
    std::this_thread::sleep_for(milliseconds(250));
  }
  return o;
}

void report_and_check(const std::string& name, const Outcome& o, double p99_limit_ms) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%-34s good %d/%d ok (%.1f%%), p99 %.1f ms, max %.1f ms | peak RSS %.0f MiB | "
                "RSS after %.0f MiB in %.1f s | slowdown %.1f\n",
                name.c_str(), o.good.ok, o.good.sent,
                o.good.sent ? 100.0 * o.good.ok / o.good.sent : 0.0, o.good.p99_ms, o.good.max_ms,
                o.during.peak, o.idle_after_mib, o.idle_after_s, o.slowdown);
  std::fputs(line, stdout);
  std::ofstream("attack-results.txt", std::ios::app) << line;
  INFO(line);
  CHECK(o.good.sent >= 20);
  CHECK(o.good.ok >= o.good.sent * 99 / 100);
  CHECK(o.good.p99_ms <= p99_limit_ms * o.slowdown);
  CHECK(o.during.peak <= kPeakLimitMiB);
  CHECK(o.idle_after_mib <= kIdleLimitMiB);
}

void run_for(milliseconds duration, const std::function<void()>& step) {
  const auto end = Clock::now() + duration;
  while (Clock::now() < end) step();
}

milliseconds attack_time() { return milliseconds(5000 * scale()); }

const std::string kReviewHead =
    "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";

}  // namespace

TEST_CASE("attack: millions of header lines in one request", "[attack]") {
  Target target;
  const Outcome o = measure(target, false, [&] {
    // Each attacker sends 8 MiB of "a:b\r\n" per round (issue: 40 MB, 120 MB).
    const std::string lines = [] {
      std::string s;
      for (int i = 0; i < 200000; ++i) s += "a:b\r\n";
      return s;
    }();
    run_for(attack_time(), [&] {
      std::vector<std::thread> attackers;
      for (int a = 0; a < 4; ++a) {
        attackers.emplace_back([&] {
          RawTls c;
          if (!c.open(target.port())) return;
          c.set_send_timeout(500);
          c.send("GET /healthz HTTP/1.1\r\n");
          for (int i = 0; i < 8 * scale() && c.send(lines); ++i) {
          }
        });
      }
      for (std::thread& t : attackers) t.join();
    });
  });
  report_and_check("header lines (4 x 8 MiB rounds)", o, 100);
}

TEST_CASE("attack: slow bodies after Expect: 100-continue, percent lengths, slow headers",
          "[attack]") {
  Target target;
  const Outcome o = measure(target, false, [&] {
    std::vector<std::unique_ptr<RawTls>> slow;
    const std::string long_line = ": " + std::string(8000, 'a') + "\r\n";
    for (int i = 0; i < 12; ++i) {
      auto c = std::make_unique<RawTls>();
      if (!c->open(target.port())) continue;
      switch (i % 3) {
        case 0:  // as many as the server has threads, and more
          c->send(kReviewHead + "Expect: 100-continue\r\nContent-Length: 4000\r\n\r\n");
          break;
        case 1:  // cpp-httplib 0.11.4 percent-decodes header values: this read as 10
          c->send(kReviewHead + "Content-Length: %31%30\r\n\r\n");
          break;
        case 2:  // over 64 KiB of headers, then a line at a time
          c->send("GET /healthz HTTP/1.1\r\n");
          for (int k = 0; k < 9; ++k) c->send("X" + std::to_string(k) + long_line);
          break;
      }
      slow.push_back(std::move(c));
    }
    run_for(attack_time(), [&] {
      for (auto& c : slow) {
        c->drain();
        c->send("a");
      }
      std::this_thread::sleep_for(milliseconds(250));
    });
  });
  report_and_check("slow bodies and headers (12 conns)", o, 100);
}

TEST_CASE("attack: slowloris on every connection slot", "[attack]") {
  Target target;
  const int connections = 1100 * scale();
  const Outcome o = measure(target, true, [&] {
    std::vector<std::unique_ptr<RawTls>> conns(connections);
    const std::string request = "POST /mutate HTTP/1.1\r\nHost: slowloris\r\nX-Pad: ";
    std::vector<std::size_t> sent(connections, 0);
    run_for(attack_time(), [&] {
      // A byte per connection per round; a connection the server closed is opened again.
      for (int i = 0; i < connections; ++i) {
        if (!conns[i] || conns[i]->failed()) {
          conns[i] = std::make_unique<RawTls>();
          conns[i]->open(target.port(), true, 1000);
          conns[i]->set_send_timeout(100);
          sent[i] = 0;
        }
        conns[i]->send(std::string_view(&request[sent[i] % request.size()], 1));
        ++sent[i];
      }
    });
  });
  report_and_check("slowloris (" + std::to_string(connections) + " conns)", o, 1000);
}

TEST_CASE("attack: idle TLS connections on every slot", "[attack]") {
  Target target;
  const int connections = 1100 * scale();
  const Outcome o = measure(target, true, [&] {
    std::vector<std::unique_ptr<RawTls>> conns;
    run_for(attack_time(), [&] {
      // Opened until there are `connections`, then the closed ones are opened again.
      for (auto& c : conns) {
        if (c->failed() || !c->drain().empty()) c->open(target.port(), true, 1000);
      }
      for (int i = 0; conns.size() < static_cast<std::size_t>(connections) && i < 100; ++i) {
        conns.push_back(std::make_unique<RawTls>());
        conns.back()->open(target.port(), true, 1000);
      }
      std::this_thread::sleep_for(milliseconds(50));
    });
  });
  report_and_check("idle TLS (" + std::to_string(connections) + " conns)", o, 1000);
}

TEST_CASE("attack: partial 3 MiB bodies held open", "[attack]") {
  Target target;
  const int connections = 150 * scale();
  const Outcome o = measure(target, false, [&] {
    const std::size_t length = 3 * 1024 * 1024 - 4096;
    const std::string chunk(256 * 1024, ' ');
    std::vector<std::unique_ptr<RawTls>> conns;
    const auto end = Clock::now() + attack_time();
    for (int i = 0; i < connections && Clock::now() < end; ++i) {
      auto c = std::make_unique<RawTls>();
      if (!c->open(target.port())) continue;
      c->set_send_timeout(20);  // the server stops reading: give up on this one
      c->send(kReviewHead + "Content-Length: " + std::to_string(length) + "\r\n\r\n{");
      for (std::size_t s = 0; s + chunk.size() < length && c->send(chunk); s += chunk.size()) {
      }
      conns.push_back(std::move(c));
    }
    std::this_thread::sleep_until(end);
  });
  report_and_check("partial 3 MiB bodies (" + std::to_string(connections) + " conns)", o, 100);
}

TEST_CASE("attack: concurrent legal 3 MB reviews", "[attack]") {
  Target target;
  // A Pod with 1.4 million arguments, and one with 40,000 containers: both under 3 MiB.
  std::string args_pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"big"},)"
                         R"("spec":{"containers":[{"name":"c","image":"x","args":[)";
  for (int i = 0; i < 1400000; ++i) args_pod += i ? ",0" : "0";
  args_pod += "]}]}}";
  std::string containers_pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"wide"},"spec":{"containers":[)";
  for (int i = 0; i < 40000; ++i) {
    containers_pod += (i ? "," : "") + std::string(R"({"name":"c)") + std::to_string(i) +
                      R"(","image":"busybox:1.36"})";
  }
  containers_pod += "]}}";
  const std::vector<std::string> reviews = {admission_review("big-args", args_pod),
                                            admission_review("big-containers", containers_pod)};
  for (const std::string& r : reviews) REQUIRE(r.size() < 3u * 1024 * 1024);
  std::atomic<int> answered{0};
  const Outcome o = measure(target, false, [&] {
    std::vector<std::thread> senders;
    const auto end = Clock::now() + attack_time();
    for (int s = 0; s < 8; ++s) {
      senders.emplace_back([&, s] {
        TlsClient::Options options;
        options.ca_path = target.ca();
        options.timeout_ms = 30000;
        TlsClient c;
        if (!c.connect(target.port(), options).empty()) return;
        while (Clock::now() < end) {
          auto res = c.request("POST", "/mutate", reviews[s % 2]);
          if (!res) return;
          if (res->status == 200) ++answered;
        }
      });
    }
    for (std::thread& t : senders) t.join();
  });
  INFO("large reviews answered: " << answered.load());
  CHECK(answered.load() >= 8);
  report_and_check("3 MB reviews (8 concurrent, " + std::to_string(answered.load()) + " done)", o,
                   100);
}

// A Deployment of about `target` bytes as `kubectl apply` leaves it: the last applied
// configuration in an annotation, a GPU container with a long env list, a sidecar with long args.
std::string large_deployment(const std::string& image, std::size_t target) {
  std::string config = R"({\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"data\":[)";
  for (int i = 0; config.size() < target / 4; ++i) {
    config += (i ? "," : "") + std::string(R"({\"key\":\"setting-)") + std::to_string(i) +
              R"(\",\"value\":\"enabled\"})";
  }
  config += "]}";
  std::string d = R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"workload",)"
                  R"("namespace":"ml-team","labels":{"app":"big"},"annotations":{)"
                  R"("kubectl.kubernetes.io/last-applied-configuration":")" +
                  config +
                  R"("}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"big"}},)"
                  R"("template":{"metadata":{"labels":{"app":"big"}},"spec":{)"
                  R"("containers":[{"name":"sidecar","image":"busybox:1.36","args":[)";
  for (int i = 0; i < 3000; ++i) d += (i ? ",\"--flag-" : "\"--flag-") + std::to_string(i) + "\"";
  d += R"(]},{"name":"trainer","image":")" + image + R"(","env":[)";
  const std::string tail = R"(],"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
  char entry[96];
  for (int i = 0; d.size() + tail.size() + sizeof entry < target; ++i) {
    std::snprintf(entry, sizeof entry, R"(%s{"name":"VAR_%06d","value":"value-%06d"})",
                  i ? "," : "", i, i);
    d += entry;
  }
  return d + tail;
}

// An UPDATE as the API server sends it: the new object and the old one.
std::string update_review(const std::string& uid, const std::string& object,
                          const std::string& old_object) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":")" +
         uid +
         R"(","kind":{"group":"apps","version":"v1","kind":"Deployment"},)"
         R"("resource":{"group":"apps","version":"v1","resource":"deployments"},)"
         R"("name":"workload","namespace":"ml-team","operation":"UPDATE",)"
         R"("userInfo":{"username":"alice","groups":["system:authenticated"]},"object":)" +
         object + R"(,"oldObject":)" + old_object +
         R"(,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"UpdateOptions"}}})";
}

// `gpuadmit review`'s answer to `review` (the same codec, no network): what the server must send.
Json offline_answer(const std::string& review) {
  auto r = run_command(std::string(GPUADMIT_BINARY) + " review", review);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

TEST_CASE("attack: 32 concurrent legal 2.9 MB UPDATE reviews", "[attack]") {
  Target target;
  constexpr int kSenders = 32;
  // Each object ~1.45 MB, both in the review: 2.9 MB, under the 3 MiB --max-body.
  const std::string object = large_deployment("nvcr.io/nvidia/pytorch:24.02-py3", 1450000);
  const std::string old_object = large_deployment("nvcr.io/nvidia/pytorch:24.01-py3", 1450000);
  auto uid_of = [](int sender) { return "burst-" + std::to_string(sender); };
  const std::string sample = update_review(uid_of(0), object, old_object);
  INFO("review size " << sample.size());
  REQUIRE(sample.size() > 2800000);
  REQUIRE(sample.size() < 3u * 1024 * 1024);
  const Json expected = offline_answer(sample);
  REQUIRE(expected["response"]["allowed"] == true);
  REQUIRE(expected["response"].contains("patch"));  // the template is mutated: real work

  struct Answer {
    bool ok = false;
    double seconds = -1;
    int status = 0;
  };
  std::vector<Answer> answers(kSenders);
  double burst_seconds = 0, server_cpu = 0;
  const Outcome o = measure(target, false, [&] {
    std::vector<std::unique_ptr<TlsClient>> clients;
    TlsClient::Options options;
    options.ca_path = target.ca();
    options.timeout_ms = 30000;
    for (int s = 0; s < kSenders; ++s) {
      clients.push_back(std::make_unique<TlsClient>());
      REQUIRE(clients.back()->connect(target.port(), options).empty());
    }
    std::vector<std::string> reviews;
    for (int s = 0; s < kSenders; ++s)
      reviews.push_back(update_review(uid_of(s), object, old_object));
    std::latch start(kSenders + 1);
    std::vector<std::thread> senders;
    for (int s = 0; s < kSenders; ++s) {
      senders.emplace_back([&, s] {
        start.arrive_and_wait();
        const auto begin = Clock::now();
        auto res = clients[s]->request("POST", "/mutate", reviews[s]);
        answers[s].seconds = std::chrono::duration<double>(Clock::now() - begin).count();
        if (!res) return;
        answers[s].status = res->status;
        Json want = expected;
        want["response"]["uid"] = uid_of(s);
        answers[s].ok = res->status == 200 && Json::parse(res->body, nullptr, false) == want;
      });
    }
    const double cpu_before = cpu_seconds_of(target.pid());
    const auto begin = Clock::now();
    start.arrive_and_wait();
    for (std::thread& t : senders) t.join();
    burst_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    server_cpu = cpu_seconds_of(target.pid()) - cpu_before;
  });
  int ok = 0;
  double slowest = 0;
  for (const Answer& a : answers) {
    ok += a.ok ? 1 : 0;
    slowest = std::max(slowest, a.seconds);
    INFO("status " << a.status << " after " << a.seconds << " s");
    CHECK(a.ok);
  }
  std::printf(
      "32 x 2.9 MB UPDATE reviews: %d/%d answered correctly in %.2f s (slowest %.2f s), "
      "server CPU %.2f s, slowdown %.1f\n",
      ok, kSenders, burst_seconds, slowest, server_cpu, o.slowdown);
  CHECK(ok == kSenders);
  CHECK(burst_seconds <= 2.0 * o.slowdown);
  // The burst keeps both cores busy (parsing, and this process encrypting 93 MB) for about a
  // second: the good clients' reviews share them.
  report_and_check("2.9 MB UPDATE burst (32 x 1, " + std::to_string(ok) + " ok)", o, 500);
}

TEST_CASE("attack: distinct 1 MB kinds and operations as metric labels", "[attack]") {
  Target target;
  const Outcome o = measure(target, false, [&] {
    TlsClient::Options options;
    options.ca_path = target.ca();
    TlsClient c;
    REQUIRE(c.connect(target.port(), options).empty());
    const int reviews = 60 * scale();
    for (int i = 0; i < reviews; ++i) {
      const std::string kind = std::to_string(i) + std::string(1 << 20, 'K');
      std::string body = admission_review("label-" + std::to_string(i), kGpuPod);
      const std::string from = R"("kind":{"group":"","version":"v1","kind":"Pod"})";
      body.replace(body.find(from), from.size(),
                   R"("kind":{"group":"","version":"v1","kind":")" + kind + "\"}");
      auto res = c.request("POST", "/validate", body);
      REQUIRE(res.has_value());
      CHECK(res->status == 200);
    }
  });
  const std::string metrics = target.server->metrics();
  INFO("metrics size " << metrics.size());
  CHECK(metrics.size() < 64 * 1024);
  CHECK(metrics.find(R"(kind="other")") != std::string::npos);
  report_and_check("1 MB kinds as labels (60 reviews)", o, 100);
}
}  // namespace attack_test
