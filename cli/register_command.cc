// gpuadmit register: the webhook configurations and native admission policies a policy implies,
// written into the cluster by a process that listens on no port (docs/install.md, "Least
// privilege"). The webhook server (`gpuadmit serve`) parses every object the API server sends it;
// this command reads only its policy and CA files and the API server's answers, so the one token
// that may write admission configuration is never within reach of a request's bytes. Once
// (register and exit, e.g. a Job) or --watch (the chart's Deployment: rendered again when the
// policy or CA changes, applied again every --interval, until SIGTERM). The work itself is
// cli/webhook_registrar.h; in steps here: the flags (parse_register_flags: parse_targets with
// parse_webhook_target and parse_native, parse_mode), in-cluster access, then run_once or
// run_watch.

#include <signal.h>

#include <charconv>
#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/webhook_registrar.h"
#include "kube/in_cluster.h"
#include "render/cluster_objects.h"
#include "webhook/log.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kRegisterUsage =
    "usage: gpuadmit register [--policy P] --webhook-namespace NS [--webhook-owner CLUSTERROLE]\n"
    "                         [--register-webhooks --webhook-service NAME --webhook-ca-bundle "
    "FILE\n"
    "                          [--webhook-failure-policy Fail|Ignore] [--webhook-mutating-timeout "
    "S]\n"
    "                          [--webhook-validating-timeout S] [--webhook-exclude-namespace "
    "NS]...\n"
    "                          [--templates mutate|validate]]\n"
    "                         [--register-native full|fallback [--native-api v1|v1beta1]]\n"
    "                         [--webhook-opt-out-label] [--watch [--interval SECONDS]]\n"
    "                         [--timeout SECONDS] [--log-level debug|info|warn|error]\n"
    "Once: exit 0 when everything is registered, 1 when it is not within --timeout (120) or an\n"
    "object was written for a newer policy generation, 2 on a usage, policy or CA error.\n"
    "--watch: keep it registered until SIGTERM (--interval: re-apply every SECONDS, 60).\n";

struct RegisterFlags {
  RegistrarSettings settings;
  webhook::LogLevel log_level = webhook::LogLevel::kInfo;
  bool watch = false;
  std::chrono::seconds timeout{120};
};

template <typename T>
bool whole_number(const std::string& text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// --register-webhooks' own --webhook-* flags and --templates into `s` (render's WebhookTarget).
std::optional<std::string> parse_webhook_target(const Args& args, RegistrarSettings& s) {
  render::WebhookTarget& target = s.target;
  for (const char* name : {"webhook-service", "webhook-ca-bundle"}) {
    if (!args.has(name)) return "--register-webhooks needs --" + std::string(name);
  }
  target.service = *args.value("webhook-service");
  target.ns = *args.value("webhook-namespace");
  s.ca_bundle_path = *args.value("webhook-ca-bundle");
  target.failure_policy = args.value_or("webhook-failure-policy", "Fail");
  if (target.failure_policy != "Fail" && target.failure_policy != "Ignore") {
    return "--webhook-failure-policy must be Fail or Ignore, not \"" + target.failure_policy + "\"";
  }
  for (auto [name, out] : {std::pair{"webhook-mutating-timeout", &target.mutating_timeout},
                           std::pair{"webhook-validating-timeout", &target.validating_timeout}}) {
    if (auto text = args.value(name)) {
      // admissionregistration/v1 validation: timeoutSeconds between 1 and 30.
      if (!whole_number(*text, *out) || *out < 1 || *out > 30) {
        return "--" + std::string(name) +
               " must be a whole number of seconds from 1 to 30, not \"" + *text + "\"";
      }
    }
  }
  target.excluded = args.values("webhook-exclude-namespace");
  for (const std::string& ns : target.excluded) {
    if (!render::is_literal_namespace(ns)) {
      return "--webhook-exclude-namespace must be a namespace name, not \"" + ns + "\"";
    }
  }
  target.opt_out_label = args.has("webhook-opt-out-label");
  // The webhooks route what the server mutates: the same value as `serve --templates`.
  const std::string templates = args.value_or("templates", "mutate");
  const auto mode = parse_template_mode(templates);
  if (!mode) return "--templates must be mutate or validate, not \"" + templates + "\"";
  target.templates = *mode;
  // The API server must never call the webhook before its Service can answer.
  s.registration.service_namespace = target.ns;
  s.registration.service_name = target.service;
  return std::nullopt;
}

// --register-native and --native-api into `s`: render --native's options, with the release
// namespace and opt-out label the webhooks are given (docs/native.md "Installed by the
// registrar").
std::optional<std::string> parse_native(const Args& args, RegistrarSettings& s) {
  const std::string mode = *args.value("register-native");
  const std::optional<render::native::NativeMode> named = render::native::native_mode_named(mode);
  if (!named) return "--register-native must be full or fallback, not \"" + mode + "\"";
  // The owner names the release's objects (the prune's label) and deletes them on uninstall.
  if (!args.has("webhook-owner")) return std::string("--register-native needs --webhook-owner");
  render::native::NativeOptions native;
  native.mode = *named;
  native.mutating_api = args.value_or("native-api", "v1");
  if (!render::native::is_mutating_api(native.mutating_api)) {
    return "--native-api must be v1 (Kubernetes 1.36) or v1beta1 (1.34-1.35), not \"" +
           native.mutating_api + "\"";
  }
  native.release_namespace = *args.value("webhook-namespace");
  native.opt_out_label = args.has("webhook-opt-out-label");
  s.native = std::move(native);
  return std::nullopt;
}

// What to register, and the flags only one of the two takes.
std::optional<std::string> parse_targets(const Args& args, RegistrarSettings& s) {
  const bool webhooks = args.has("register-webhooks"), native = args.has("register-native");
  if (!webhooks && !native) {
    return std::string("nothing to register: give --register-webhooks, --register-native or both");
  }
  for (const char* name : {"webhook-service", "webhook-ca-bundle", "webhook-failure-policy",
                           "webhook-mutating-timeout", "webhook-validating-timeout",
                           "webhook-exclude-namespace", "templates"}) {
    if (args.has(name) && !webhooks) return "--" + std::string(name) + " needs --register-webhooks";
  }
  if (args.has("native-api") && !native) return std::string("--native-api needs --register-native");
  if (!args.has("webhook-namespace")) return std::string("--webhook-namespace is required");
  s.policy_path = args.value_or("policy", "");
  s.webhooks = webhooks;
  s.registration.owner_cluster_role = args.value_or("webhook-owner", "");
  if (webhooks) {
    if (auto error = parse_webhook_target(args, s)) return error;
  }
  if (native) return parse_native(args, s);
  return std::nullopt;
}

// --log-level, --watch, --interval, --timeout.
std::optional<std::string> parse_mode(const Args& args, RegisterFlags& flags) {
  auto level = webhook::parse_log_level(args.value_or("log-level", "info"));
  if (!level) return std::string("--log-level must be debug, info, warn or error");
  flags.log_level = *level;
  flags.watch = args.has("watch");
  if (args.has("interval") && !flags.watch) return std::string("--interval needs --watch");
  if (args.has("timeout") && flags.watch) {
    return std::string("--timeout is for a one-shot run, not --watch");
  }
  for (auto [name, fallback] : {std::pair{"interval", 60}, std::pair{"timeout", 120}}) {
    const std::string text = args.value_or(name, std::to_string(fallback));
    long seconds = 0;
    if (!whole_number(text, seconds) || seconds < 1 || seconds > 3600) {
      return "--" + std::string(name) +
             " must be a whole number of seconds from 1 to 3600, not \"" + text + "\"";
    }
    if (std::string_view(name) == "interval") {
      flags.settings.reapply_interval = std::chrono::seconds(seconds);
    } else {
      flags.timeout = std::chrono::seconds(seconds);
    }
  }
  return std::nullopt;
}

// The flags, or the exit code after the message (2: bad usage; 0: --help).
std::variant<RegisterFlags, int> parse_register_flags(const std::vector<std::string>& argv) {
  Args args;
  if (auto error =
          Args::parse(argv,
                      {"policy", "webhook-service", "webhook-namespace", "webhook-ca-bundle",
                       "webhook-owner", "webhook-failure-policy", "webhook-mutating-timeout",
                       "webhook-validating-timeout", "webhook-exclude-namespace", "templates",
                       "register-native", "native-api", "interval", "timeout", "log-level"},
                      {"register-webhooks", "webhook-opt-out-label", "watch"}, args)) {
    return usage_error("register", kRegisterUsage, *error);
  }
  if (args.help()) return print_usage(kRegisterUsage);
  if (!args.positional().empty()) {
    return usage_error("register", kRegisterUsage,
                       "unexpected argument \"" + args.positional().front() + "\"");
  }
  RegisterFlags flags;
  std::optional<std::string> error = parse_targets(args, flags.settings);
  if (!error) error = parse_mode(args, flags);
  if (error) {
    std::cerr << "gpuadmit register: " << *error << "\n";
    return 2;
  }
  return flags;
}

// SIGTERM and SIGINT are taken by waiting for them (sigtimedwait), between rounds.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return signals;
}

// Waits a second; the signal that arrived meanwhile, or 0.
int wait_a_second(const sigset_t& signals) {
  const timespec second{1, 0};
  const int sig = sigtimedwait(&signals, nullptr, &second);
  return sig == SIGTERM || sig == SIGINT ? sig : 0;
}

// Register once: until settled, --timeout or a signal.
int run_once(WebhookRegistrar& registrar, std::chrono::seconds timeout, const sigset_t& signals,
             const webhook::Logger& logger) {
  const auto deadline = WebhookRegistrar::Clock::now() + timeout;
  while (true) {
    const RoundResult r = registrar.round(WebhookRegistrar::Clock::now());
    if (!r.rendered && !registrar.render_errors().empty()) return 2;  // logged by the registrar
    if (r.settled) {
      logger.info("done", {{"superseded", r.superseded}});
      return r.superseded ? 1 : 0;
    }
    if (WebhookRegistrar::Clock::now() >= deadline) {
      logger.error("not registered within --timeout", {{"timeout_s", timeout.count()}});
      return 1;
    }
    if (const int sig = wait_a_second(signals)) {
      logger.warn("signal received; not registered",
                  {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      return 1;
    }
  }
}

// Keep it registered until SIGTERM or SIGINT; exit 0.
int run_watch(WebhookRegistrar& registrar, const sigset_t& signals, const webhook::Logger& logger) {
  while (true) {
    registrar.round(WebhookRegistrar::Clock::now());
    if (const int sig = wait_a_second(signals)) {
      logger.info("stopped", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      return 0;
    }
  }
}

}  // namespace

int register_command(const std::vector<std::string>& argv) {
  auto parsed = parse_register_flags(argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  RegisterFlags& flags = std::get<RegisterFlags>(parsed);
  const sigset_t signals = block_stop_signals();
  const webhook::Logger logger(flags.log_level, stderr);
  auto access = kube::InClusterAccess::from_environment();
  if (auto* error = std::get_if<std::string>(&access)) {
    logger.error("cannot start", {{"error", *error}});
    return 2;
  }
  flags.settings.registration.access = std::get<kube::InClusterAccess>(access);
  const RegistrarSettings& s = flags.settings;
  logger.info("started", {{"policy", s.policy_path.empty() ? "(embedded default)" : s.policy_path},
                          {"register_webhooks", s.webhooks},
                          {"register_native",
                           s.native ? render::native::native_mode_name(s.native->mode) : "off"},
                          {"owner", s.registration.owner_cluster_role},
                          {"watch", flags.watch}});
  WebhookRegistrar registrar(std::move(flags.settings), logger);
  return flags.watch ? run_watch(registrar, signals, logger)
                     : run_once(registrar, flags.timeout, signals, logger);
}

}  // namespace gpuadmit::cli
