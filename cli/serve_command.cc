// gpuadmit serve: the admission webhook (SPEC §7). Flags → ServerConfig, the pipeline built
// from the default mutators and rules (as `review` and `lint` build theirs), signals handled on
// a thread of their own, and the shutdown deadline kept even if a drain would not end.

#include <malloc.h>
#include <signal.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "cli/args.h"
#include "cli/commands.h"
#include "kube/kube_claim_resolver.h"
#include "mutators/all_mutators.h"
#include "rules/all_rules.h"
#include "webhook/log.h"
#include "webhook/server.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpuadmit serve [--policy P] --tls-cert C --tls-key K [--listen ADDR]\n"
    "                      [--metrics-listen ADDR|off] [--client-ca CA] [--threads N]\n"
    "                      [--max-body BYTES] [--log-level debug|info|warn|error]\n"
    "                      [--watch-interval-ms N] [--shutdown-delay SECONDS]\n"
    "                      [--shutdown-deadline SECONDS] [--memory-budget BYTES]\n"
    "                      [--request-timeout SECONDS] [--dra-lookup [--dra-lookup-timeout MS]]\n"
    "                      [--templates mutate|validate]\n";

template <typename T>
bool parse_number(const std::string& text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "--shutdown-delay 5", "--shutdown-delay 0.5": seconds, to the millisecond.
std::optional<std::string> parse_seconds(const Args& args, const char* name, double max,
                                         std::chrono::milliseconds& out) {
  const auto text = args.value(name);
  if (!text) return std::nullopt;
  double seconds = -1;
  if (!parse_number(*text, seconds) || !(seconds >= 0) || seconds > max) {
    return std::string("--") + name + " must be a number of seconds from 0 to " +
           std::to_string(static_cast<long>(max)) + ", not \"" + *text + "\"";
  }
  out = std::chrono::milliseconds(static_cast<long long>(seconds * 1000 + 0.5));
  return std::nullopt;
}

}  // namespace

int serve_command(const std::vector<std::string>& argv) {
  const auto started = std::chrono::steady_clock::now();
  Args args;
  if (auto error = Args::parse(
          argv,
          {"policy", "tls-cert", "tls-key", "listen", "metrics-listen", "client-ca", "threads",
           "max-body", "log-level", "watch-interval-ms", "shutdown-delay", "shutdown-deadline",
           "memory-budget", "request-timeout", "dra-lookup-timeout", "templates"},
          {"dra-lookup"}, args)) {
    std::cerr << "gpuadmit serve: " << *error << "\n" << kUsage;
    return 2;
  }
  if (args.help()) return print_usage(kUsage);
  if (!args.positional().empty()) {
    std::cerr << "gpuadmit serve: unexpected argument \"" << args.positional().front() << "\"\n"
              << kUsage;
    return 2;
  }
  auto level = webhook::parse_log_level(args.value_or("log-level", "info"));
  if (!level) {
    std::cerr << "gpuadmit serve: --log-level must be debug, info, warn or error\n";
    return 2;
  }
  webhook::ServerConfig config;
  config.policy_path = args.value_or("policy", "");
  config.cert_path = args.value_or("tls-cert", "");
  config.key_path = args.value_or("tls-key", "");
  config.client_ca_path = args.value_or("client-ca", "");
  config.listen = args.value_or("listen", config.listen);
  config.metrics_listen = args.value_or("metrics-listen", config.metrics_listen);
  struct NumberFlag {
    const char* name;
    long long min, max;
    long long* out;
  };
  long long threads = config.threads, max_body = static_cast<long long>(config.max_body);
  long long watch_ms = config.watch_interval.count();
  long long memory_budget = static_cast<long long>(config.memory_budget);
  long long dra_timeout_ms = kube::KubeClaimResolverConfig{}.timeout.count();
  for (const NumberFlag& flag : {NumberFlag{"threads", 1, 4096, &threads},
                                 NumberFlag{"max-body", 1024, 1ll << 30, &max_body},
                                 NumberFlag{"watch-interval-ms", 10, 3600000, &watch_ms},
                                 NumberFlag{"memory-budget", 1ll << 20, 1ll << 40, &memory_budget},
                                 NumberFlag{"dra-lookup-timeout", 10, 10000, &dra_timeout_ms}}) {
    if (auto text = args.value(flag.name)) {
      if (!parse_number(*text, *flag.out) || *flag.out < flag.min || *flag.out > flag.max) {
        std::cerr << "gpuadmit serve: --" << flag.name << " must be a whole number from "
                  << flag.min << " to " << flag.max << ", not \"" << *text << "\"\n";
        return 2;
      }
    }
  }
  config.threads = static_cast<int>(threads);
  config.max_body = static_cast<size_t>(max_body);
  config.watch_interval = std::chrono::milliseconds(watch_ms);
  config.memory_budget = static_cast<size_t>(memory_budget);
  std::chrono::milliseconds request_timeout = config.request_timeout;
  for (auto [name, out] : {std::pair{"shutdown-delay", &config.shutdown_delay},
                           std::pair{"shutdown-deadline", &config.shutdown_deadline},
                           std::pair{"request-timeout", &request_timeout}}) {
    if (auto error = parse_seconds(args, name, 3600, *out)) {
      std::cerr << "gpuadmit serve: " << *error << "\n";
      return 2;
    }
  }
  config.request_timeout = request_timeout;
  if (args.has("dra-lookup-timeout") && !args.has("dra-lookup")) {
    std::cerr << "gpuadmit serve: --dra-lookup-timeout needs --dra-lookup\n";
    return 2;
  }
  if (const auto mode = parse_template_mode(args.value_or("templates", "mutate"))) {
    config.templates = *mode;
  } else {
    std::cerr << "gpuadmit serve: --templates must be mutate or validate, not \""
              << args.value_or("templates", "") << "\"\n";
    return 2;
  }

  // Few malloc arenas: every worker thread would otherwise get one, and RSS grows with the
  // thread count, not with the work. Only for a glibc build: with mimalloc linked in (the
  // default, cli/CMakeLists.txt) this sets an unused glibc parameter.
  mallopt(M_ARENA_MAX, 2);

  // Signals go to one thread that waits for them; every other thread (created below) inherits
  // the blocked mask, so SIGTERM never interrupts a worker. A write to a socket the client has
  // closed must not kill the process either.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const webhook::Logger logger(*level, stderr, webhook::Logger::Output::kBuffered);
  const Pipeline pipeline(default_mutators(), default_rules());
  // --dra-lookup: DRA claims looked up through the Kubernetes API (docs/dra.md, "API lookup").
  std::unique_ptr<kube::KubeClaimResolver> claims;
  if (args.has("dra-lookup")) {
    auto in_cluster = kube::KubeClaimResolverConfig::in_cluster();
    if (auto* error = std::get_if<std::string>(&in_cluster)) {
      logger.error("cannot start", {{"error", "--dra-lookup: " + *error}});
      return 2;
    }
    auto& lookup = std::get<kube::KubeClaimResolverConfig>(in_cluster);
    lookup.timeout = std::chrono::milliseconds(dra_timeout_ms);
    claims = std::make_unique<kube::KubeClaimResolver>(std::move(lookup));
    config.claims = claims.get();
    config.extra_metrics = [resolver = claims.get()](std::string& out) {
      resolver->render_metrics(out);
    };
  }
  auto created = webhook::Server::create(config, pipeline, logger);
  if (!created) {
    for (const std::string& e : created.error()) logger.error("cannot start", {{"error", e}});
    return 2;
  }
  webhook::Server& server = **created;

  std::atomic<bool> done{false};
  std::thread signal_thread([&] {
    const timespec tick{0, 200 * 1000 * 1000};
    while (!done.load()) {
      const int sig = sigtimedwait(&signals, nullptr, &tick);
      if (sig == SIGTERM || sig == SIGINT) {
        logger.info("signal received", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
        const auto deadline = std::chrono::steady_clock::now() + config.shutdown_deadline;
        server.shutdown();
        // The pool closes what is left at the deadline; should anything still hold run() a
        // second later, the process ends anyway, before the kubelet's SIGKILL.
        while (!done.load()) {
          if (std::chrono::steady_clock::now() > deadline + std::chrono::seconds(1)) {
            logger.error("stopped", {{"clean", false}, {"reason", "shutdown deadline passed"}});
            logger.flush();
            std::_Exit(1);
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return;
      }
    }
  });

  const auto ready_us = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
  logger.info("ready",
              {{"listen", config.listen},
               {"port", server.port()},
               {"metrics_port", server.metrics_port()},
               {"policy", config.policy_path.empty() ? "(embedded default)" : config.policy_path},
               {"threads", config.threads},
               {"client_ca", !config.client_ca_path.empty()},
               {"dra_lookup", claims != nullptr},
               {"startup_us", ready_us}});
  const bool clean = server.run();
  done.store(true);
  signal_thread.join();
  if (clean) {
    logger.info("stopped", {{"clean", true}});
  } else {
    logger.error("stopped", {{"clean", false}, {"reason", "shutdown deadline passed"}});
  }
  return clean ? 0 : 1;
}

}  // namespace gpuadmit::cli
