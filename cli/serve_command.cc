// gpuadmit serve: the admission webhook (SPEC §7). In steps: the flags → ServerConfig
// (parse_flags: parse_settings, parse_numbers), what the server reads from the cluster
// (start_cluster_reads: DRA claims, PriorityClasses, Nodes), the pipeline built from the default
// mutators and rules (as `review` and `lint` build theirs), signals handled on a thread of their
// own, and the shutdown deadline kept even if a drain would not end (serve_until_stopped).
// The server writes nothing to the API: its webhook configurations and the native policies are
// `gpuadmit register`'s, a process without a listener (docs/install.md, "Least privilege").

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
#include "kube/node_watch.h"
#include "kube/priority_class_watch.h"
#include "mutators/all_mutators.h"
#include "rules/all_rules.h"
#include "webhook/log.h"
#include "webhook/server.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kServeUsage =
    "usage: gpuadmit serve [--policy P] --tls-cert C --tls-key K [--listen ADDR]\n"
    "                      [--metrics-listen ADDR|off] [--client-ca CA] [--threads N]\n"
    "                      [--max-body BYTES] [--log-level debug|info|warn|error]\n"
    "                      [--watch-interval-ms N] [--shutdown-delay SECONDS]\n"
    "                      [--shutdown-deadline SECONDS] [--memory-budget BYTES]\n"
    "                      [--request-timeout SECONDS]\n"
    "                      [--dra-lookup [--dra-lookup-timeout MS] [--dra-lookup-deadline MS]]\n"
    "                      [--cluster-priority-classes] [--node-watch]\n"
    "                      [--templates mutate|validate]\n";

// What the flags say, beyond the server's own configuration.
struct ServeFlags {
  webhook::ServerConfig config;
  webhook::LogLevel log_level = webhook::LogLevel::kInfo;
  bool dra_lookup = false;
  std::chrono::milliseconds dra_timeout = kube::KubeClaimResolverConfig{}.timeout;
  std::chrono::milliseconds dra_deadline = kube::KubeClaimResolverConfig{}.review_deadline;
  bool cluster_priority_classes = false;
  bool node_watch = false;  // GPU009 on spec.nodeName (docs/rules.md)
};

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

// The whole-number flags, each within its range; an error names the flag.
std::optional<std::string> parse_numbers(const Args& args, ServeFlags& flags) {
  webhook::ServerConfig& config = flags.config;
  long long threads = config.threads, max_body = static_cast<long long>(config.max_body);
  long long watch_ms = config.watch_interval.count();
  long long memory_budget = static_cast<long long>(config.memory_budget);
  long long dra_timeout_ms = flags.dra_timeout.count(),
            dra_deadline_ms = flags.dra_deadline.count();
  struct NumberFlag {
    const char* name;
    long long min, max;
    long long* out;
  };
  for (const NumberFlag& flag : {NumberFlag{"threads", 1, 4096, &threads},
                                 NumberFlag{"max-body", 1024, 1ll << 30, &max_body},
                                 NumberFlag{"watch-interval-ms", 10, 3600000, &watch_ms},
                                 NumberFlag{"memory-budget", 1ll << 20, 1ll << 40, &memory_budget},
                                 NumberFlag{"dra-lookup-timeout", 10, 10000, &dra_timeout_ms},
                                 NumberFlag{"dra-lookup-deadline", 10, 30000, &dra_deadline_ms}}) {
    if (auto text = args.value(flag.name)) {
      if (!parse_number(*text, *flag.out) || *flag.out < flag.min || *flag.out > flag.max) {
        return "--" + std::string(flag.name) + " must be a whole number from " +
               std::to_string(flag.min) + " to " + std::to_string(flag.max) + ", not \"" + *text +
               "\"";
      }
    }
  }
  config.threads = static_cast<int>(threads);
  config.max_body = static_cast<size_t>(max_body);
  config.watch_interval = std::chrono::milliseconds(watch_ms);
  config.memory_budget = static_cast<size_t>(memory_budget);
  flags.dra_timeout = std::chrono::milliseconds(dra_timeout_ms);
  flags.dra_deadline = std::chrono::milliseconds(dra_deadline_ms);
  for (auto [name, out] : {std::pair{"shutdown-delay", &config.shutdown_delay},
                           std::pair{"shutdown-deadline", &config.shutdown_deadline},
                           std::pair{"request-timeout", &config.request_timeout}}) {
    if (auto error = parse_seconds(args, name, 3600, *out)) return error;
  }
  return std::nullopt;
}

// The log level, the numbers, and the cluster reads' switches.
std::optional<std::string> parse_settings(const Args& args, ServeFlags& flags) {
  auto level = webhook::parse_log_level(args.value_or("log-level", "info"));
  if (!level) return std::string("--log-level must be debug, info, warn or error");
  flags.log_level = *level;
  if (auto error = parse_numbers(args, flags)) return error;
  flags.dra_lookup = args.has("dra-lookup");
  for (const char* needs_lookup : {"dra-lookup-timeout", "dra-lookup-deadline"}) {
    if (args.has(needs_lookup) && !flags.dra_lookup) {
      return "--" + std::string(needs_lookup) + " needs --dra-lookup";
    }
  }
  flags.cluster_priority_classes = args.has("cluster-priority-classes");
  flags.node_watch = args.has("node-watch");
  const std::string templates = args.value_or("templates", "mutate");
  const auto mode = parse_template_mode(templates);
  if (!mode) return "--templates must be mutate or validate, not \"" + templates + "\"";
  flags.config.templates = *mode;
  return std::nullopt;
}

// The flags `serve --register-*` took before registration moved to `gpuadmit register`: the
// serving process holds no token that may write admission configuration (docs/install.md, "Least
// privilege"). Named, so that an old command line fails with where they went.
std::optional<std::string> removed_flag(const std::vector<std::string>& argv) {
  for (const std::string& arg : argv) {
    if (arg == "--") break;
    const std::string name = arg.substr(0, arg.find('='));
    if (name == "--register-webhooks" || name == "--register-native" || name == "--native-api" ||
        name.rfind("--webhook-", 0) == 0) {
      return name +
             " was removed from serve: webhook configurations and native policies are registered "
             "by `gpuadmit register`, which takes the same flags and runs apart from the server "
             "(docs/install.md, \"Least privilege\")";
    }
  }
  return std::nullopt;
}

// The flags, or the exit code after the message (2: bad usage; 0: --help).
std::variant<ServeFlags, int> parse_flags(const std::vector<std::string>& argv) {
  if (auto error = removed_flag(argv)) {
    std::cerr << "gpuadmit serve: " << *error << "\n";
    return 2;
  }
  Args args;
  if (auto error =
          Args::parse(argv,
                      {"policy", "tls-cert", "tls-key", "listen", "metrics-listen", "client-ca",
                       "threads", "max-body", "log-level", "watch-interval-ms", "shutdown-delay",
                       "shutdown-deadline", "memory-budget", "request-timeout",
                       "dra-lookup-timeout", "dra-lookup-deadline", "templates"},
                      {"dra-lookup", "cluster-priority-classes", "node-watch"}, args)) {
    std::cerr << "gpuadmit serve: " << *error << "\n" << kServeUsage;
    return 2;
  }
  if (args.help()) return print_usage(kServeUsage);
  if (!args.positional().empty()) {
    std::cerr << "gpuadmit serve: unexpected argument \"" << args.positional().front() << "\"\n"
              << kServeUsage;
    return 2;
  }
  ServeFlags flags;
  webhook::ServerConfig& config = flags.config;
  config.policy_path = args.value_or("policy", "");
  config.cert_path = args.value_or("tls-cert", "");
  config.key_path = args.value_or("tls-key", "");
  config.client_ca_path = args.value_or("client-ca", "");
  config.listen = args.value_or("listen", config.listen);
  config.metrics_listen = args.value_or("metrics-listen", config.metrics_listen);
  if (auto error = parse_settings(args, flags)) {
    std::cerr << "gpuadmit serve: " << *error << "\n";
    return 2;
  }
  return flags;
}

// What the server reads from the Kubernetes API, owned here for the server's whole life.
struct ClusterReads {
  std::unique_ptr<kube::KubeClaimResolver> claims;
  std::unique_ptr<kube::PriorityClassWatch> priority_classes;
  std::unique_ptr<kube::NodeWatch> nodes;
};

// --node-watch: the cluster's Nodes, read-only and cached (kube/node_watch.h), for GPU009's
// spec.nodeName; /readyz waits for the first list.
void start_node_watch(const kube::InClusterAccess& in_cluster, const webhook::Logger& logger,
                      webhook::ServerConfig& config, ClusterReads& reads,
                      std::vector<std::function<void(std::string&)>>& metrics) {
  kube::NodeWatchConfig watch;
  watch.access = in_cluster;
  watch.on_error = [&logger](const std::string& error) {
    logger.warn("reading the cluster's Nodes failed; the last ones read stay", {{"error", error}});
  };
  reads.nodes = std::make_unique<kube::NodeWatch>(std::move(watch));
  config.nodes = reads.nodes.get();
  metrics.push_back([watch = reads.nodes.get()](std::string& out) { watch->render_metrics(out); });
}

// --dra-lookup, --cluster-priority-classes and --node-watch: in-cluster API access (docs/dra.md
// "API lookup", docs/mutations.md "Priority", docs/rules.md GPU009), wired into the server's
// configuration. An error (one line) when they are asked for outside a pod.
std::optional<std::string> start_cluster_reads(ServeFlags& flags, const webhook::Logger& logger,
                                               webhook::ServerConfig& config, ClusterReads& reads) {
  if (!flags.dra_lookup && !flags.cluster_priority_classes && !flags.node_watch) {
    return std::nullopt;
  }
  auto access = kube::InClusterAccess::from_environment();
  if (auto* error = std::get_if<std::string>(&access)) {
    const char* flag = flags.dra_lookup                 ? "--dra-lookup"
                       : flags.cluster_priority_classes ? "--cluster-priority-classes"
                                                        : "--node-watch";
    return std::string(flag) + ": " + *error;
  }
  const kube::InClusterAccess& in_cluster = std::get<kube::InClusterAccess>(access);
  std::vector<std::function<void(std::string&)>> metrics;
  if (flags.dra_lookup) {
    kube::KubeClaimResolverConfig lookup;
    lookup.host = in_cluster.host;
    lookup.port = in_cluster.port;
    lookup.token_path = in_cluster.token_path;
    lookup.ca_path = in_cluster.ca_path;
    lookup.timeout = flags.dra_timeout;
    lookup.review_deadline = flags.dra_deadline;
    reads.claims = std::make_unique<kube::KubeClaimResolver>(std::move(lookup));
    config.claims_for_review = [resolver = reads.claims.get()] { return resolver->for_review(); };
    metrics.push_back(
        [resolver = reads.claims.get()](std::string& out) { resolver->render_metrics(out); });
  }
  if (flags.cluster_priority_classes) {
    kube::PriorityClassWatchConfig watch;
    watch.access = in_cluster;
    watch.on_error = [&logger](const std::string& error) {
      logger.warn("reading the cluster's PriorityClasses failed; the last ones read stay",
                  {{"error", error}});
    };
    reads.priority_classes = std::make_unique<kube::PriorityClassWatch>(std::move(watch));
    config.priority_classes = reads.priority_classes.get();
    metrics.push_back(
        [watch = reads.priority_classes.get()](std::string& out) { watch->render_metrics(out); });
  }
  if (flags.node_watch) start_node_watch(in_cluster, logger, config, reads, metrics);
  config.extra_metrics = [metrics = std::move(metrics)](std::string& out) {
    for (const auto& render : metrics) render(out);
  };
  return std::nullopt;
}

// Signals go to one thread that waits for them; every thread created after this inherits the
// blocked mask, so SIGTERM never interrupts a worker. A write to a socket the client has closed
// must not kill the process either.
sigset_t block_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return signals;
}

// Serves until SIGTERM or SIGINT has drained the server (or its deadline has passed); the exit
// code: 0 after a clean drain, 1 otherwise.
int serve_until_stopped(webhook::Server& server, const webhook::ServerConfig& config,
                        const webhook::Logger& logger, const sigset_t& signals) {
  std::atomic<bool> done{false};
  std::thread signal_thread([&] {
    const timespec tick{0, 200 * 1000 * 1000};
    while (!done.load()) {
      const int sig = sigtimedwait(&signals, nullptr, &tick);
      if (sig != SIGTERM && sig != SIGINT) continue;
      logger.info("signal received", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      const auto deadline = std::chrono::steady_clock::now() + config.shutdown_deadline;
      server.shutdown();
      // The pool closes what is left at the deadline; should anything still hold run() a second
      // later, the process ends anyway, before the kubelet's SIGKILL.
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
  });
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

}  // namespace

int serve_command(const std::vector<std::string>& argv) {
  const auto started = std::chrono::steady_clock::now();
  auto parsed = parse_flags(argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  ServeFlags& flags = std::get<ServeFlags>(parsed);
  webhook::ServerConfig& config = flags.config;

  // Few malloc arenas: every worker thread would otherwise get one, and RSS grows with the
  // thread count, not with the work. Only for a glibc build: with mimalloc linked in (the
  // default, cli/CMakeLists.txt) this sets an unused glibc parameter.
  mallopt(M_ARENA_MAX, 2);
  const sigset_t signals = block_signals();

  const webhook::Logger logger(flags.log_level, stderr, webhook::Logger::Output::kBuffered);
  ClusterReads reads;
  if (auto error = start_cluster_reads(flags, logger, config, reads)) {
    logger.error("cannot start", {{"error", *error}});
    return 2;
  }
  const Pipeline pipeline(default_mutators(), default_rules());
  auto created = webhook::Server::create(config, pipeline, logger);
  if (!created) {
    for (const std::string& e : created.error()) logger.error("cannot start", {{"error", e}});
    return 2;
  }
  webhook::Server& server = **created;
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
               {"dra_lookup", reads.claims != nullptr},
               {"cluster_priority_classes", reads.priority_classes != nullptr},
               {"node_watch", reads.nodes != nullptr},
               {"startup_us", ready_us}});
  return serve_until_stopped(server, config, logger, signals);
}

}  // namespace gpuadmit::cli
