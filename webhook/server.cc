#include "webhook/server.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "certs/client_ca.h"
#include "certs/file_watch.h"
#include "certs/key_pair.h"
#include "engine/admission.h"
#include "engine/json_dump.h"
#include "engine/shared_slot.h"
#include "policies/loader.h"
#include "webhook/connection_pool.h"
#include "webhook/httplib_bridge.h"
#include "webhook/metric_labels.h"
#include "webhook/request_framing.h"
#include "webhook/review_fast_path.h"
#include "webhook/tls_connection.h"

namespace gpuadmit::webhook {
namespace {

using Clock = std::chrono::steady_clock;

// TLS 1.2 suites: ECDHE + AEAD only (GCM, ChaCha20-Poly1305), for ECDSA and RSA certificates.
// Go's TLS client, which the API server uses, offers all of them. TLS 1.3 suites are AEAD-only
// by definition.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* kTls13Suites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr int kListenBacklog = 1024;  // cpp-httplib's compiled-in 5 drops SYNs under bursts
constexpr const char* kJson = "application/json";
constexpr std::size_t kKeepAliveMaxCount = 1000000;
constexpr std::size_t kMaxLoggedValue = 512;

// SO_REUSEADDR only. cpp-httplib's default sets SO_REUSEPORT on Linux, which lets a second
// process bind the same port and silently take half of the connections.
void socket_options(socket_t sock) {
  int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

// The connection pool's defences at work (webhook/connection_pool.h), for dashboards and the
// attack tests.
void render_pool_counters(const PoolCounters& counters, std::string& out) {
  auto counter = [&out](const char* name, const char* help, std::uint64_t value) {
    append_metric_header(out, name, "counter", help);
    out += name;
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  };
  counter("gpuadmit_connections_evicted_total",
          "Connections closed to make room for a new one when every slot was taken.",
          counters.evicted.load());
  counter("gpuadmit_connections_deadline_total",
          "Connections closed because a handshake or a request did not finish in time.",
          counters.deadline_closed.load());
  counter("gpuadmit_memory_budget_waits_total",
          "Times a connection stopped being read until the memory budget had room.",
          counters.budget_waits.load());
  counter("gpuadmit_requests_refused_framing_total",
          "Requests refused before parsing: request line, header line, count or size limits.",
          counters.refused_framing.load());
  append_metric_header(out, "gpuadmit_memory_budget_used_bytes", "gauge",
                       "Bytes of the memory budget in use.");
  out += "gpuadmit_memory_budget_used_bytes ";
  out += std::to_string(counters.budget_used.load());
  out += '\n';
}

std::string json_error(std::string_view message) {
  Json body = Json::object();
  body["error"] = message;
  return body.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void reply_error(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  res.set_content(json_error(message), kJson);
}

// Closes the connection once the response is written (the pool then lingers so that the client
// reads the response): a refused request's body was not read, and the stream cannot carry
// another request. Not set twice when cpp-httplib writes it anyway.
void close_after_response(const httplib::Request& req, httplib::Response& res) {
  if (!httplib_closes_after(req)) res.set_header("Connection", "close");
}

}  // namespace

std::optional<std::pair<std::string, int>> parse_listen_address(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string host = address.substr(0, colon);
  const std::string port_text = address.substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return std::nullopt;
  }
  if (host.empty()) host = "0.0.0.0";
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.find(':') != std::string::npos && address.front() != '[') return std::nullopt;
  return std::make_pair(host, port);
}

struct Server::Impl {
  Impl(ServerConfig c, const Pipeline& p, const Logger& l)
      : config(std::move(c)),
        pipeline(p),
        logger(l),
        https([this](SSL_CTX& ctx) { return setup_tls(ctx); }) {}

  ServerConfig config;
  const Pipeline& pipeline;
  const Logger& logger;
  Metrics metrics;
  SharedSlot<const CompiledPolicy> policy;
  SharedSlot<const certs::KeyPair> key_pair;
  SharedSlot<const certs::ClientCa> client_ca;  // null without --client-ca
  // The client CA file as setup_tls read it: declared before `https`, whose construction runs
  // setup_tls, so that no member initializer resets it afterwards.
  certs::FileSignature client_ca_signature;
  std::string tls_setup_error;  // set by setup_tls, read once after construction
  HttpsServer https;
  PlainServer metrics_http;
  bool metrics_enabled = false;
  int port = 0, metrics_port = 0;

  std::atomic<bool> draining{false};
  std::atomic<bool> run_started{false};
  std::mutex shutdown_mutex;
  bool shutdown_done = false;

  // The watcher: polls the policy and key pair files every watch_interval.
  std::thread watcher, metrics_thread;
  std::mutex watch_mutex;
  std::condition_variable watch_cv;
  bool stop_watching = false;
  certs::FileSignature policy_signature, cert_signature, key_signature;

  bool setup_tls(SSL_CTX& ctx);
  static int install_key_pair(SSL* ssl, void* arg);
  // configure_http()'s steps.
  void configure_http();
  void configure_https_server();
  ConnectionLimits connection_limits() const;
  void install_refusal_handlers();
  void install_routes();
  void install_probes(httplib::Server& server);
  void configure_metrics_server();
  // Binds the HTTPS and (when set) metrics listeners; an error for each that cannot bind.
  void bind_listeners(const std::pair<std::string, int>& https_listen,
                      const std::optional<std::pair<std::string, int>>& metrics_listen,
                      std::vector<std::string>& errors);
  bool precheck(const httplib::Request& req, httplib::Response& res);
  // precheck()'s second half: the headers that frame the body (Transfer-Encoding,
  // Content-Encoding, Content-Length).
  bool precheck_body(const httplib::Request& req, httplib::Response& res, bool review, bool probe);
  void handle_review(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);
  // A review's answer, whichever path the request came by: metrics and the decision log too.
  struct ReviewReply {
    int status = 200;
    std::string body;  // JSON
  };
  ReviewReply review(Endpoint endpoint, std::string_view content_type, std::string_view body,
                     std::string_view remote);
  // review()'s steps. micros < 0: refused before the engine ran.
  ReviewReply refuse_review(std::string_view endpoint_name, int status, std::string_view message,
                            std::string_view remote, std::int64_t micros);
  static bool response_allowed(const Json& review_response);
  void count_decision(std::string_view endpoint_name, const AdmissionOutcome& outcome, bool allowed,
                      bool patched);
  void log_decision(std::string_view endpoint_name, const AdmissionOutcome& outcome, bool allowed,
                    bool patched, std::uint64_t micros);
  std::optional<bool> serve_plain_review(TlsStream& stream, bool last, bool& connection_closed);
  void refuse_in_pool(TlsStream& stream, int status, std::string_view message);
  // GPUADMIT_REVIEW_FAST_PATH=off: every request goes through cpp-httplib.
  bool review_fast_path = true;
  void reject(const httplib::Request& req, httplib::Response& res, int status,
              std::string_view message);
  void watch_loop();
  void check_policy();
  void check_key_pair();
  void check_client_ca();
  bool ready() const { return not_ready_reason().empty(); }
  // "" when ready; else why not, for /readyz.
  std::string_view not_ready_reason() const {
    if (draining.load()) return "draining";
    if (policy.load() == nullptr || key_pair.load() == nullptr) return "not ready";
    if (config.priority_classes != nullptr && !config.priority_classes->synced()) {
      return "the cluster's PriorityClasses are not listed yet";
    }
    if (config.nodes != nullptr && !config.nodes->synced()) {
      return "the cluster's Nodes are not listed yet";
    }
    return "";
  }
  // The policy's priorityClasses against the cluster's, after either changed: the differences
  // are logged (each new set once) and counted in /metrics.
  void check_priority_classes();
  std::uint64_t checked_priority_version = 0, checked_policy_generation = 0;
  std::vector<std::string> priority_disagreements;
  std::atomic<std::size_t> priority_disagreement_count{0};
};

// Called by OpenSSL for every handshake, before the cipher is chosen: installs whichever key
// pair is current. Each SSL takes its own references, so a reload that swaps the pair mid-
// handshake frees nothing in use. (cpp-httplib 0.11.4 has no certificate swap API.)
// With --client-ca, the current client CA the same way: the store this handshake verifies the
// client's chain against (SSL_set1_verify_cert_store: the SSL's own store, taken before the
// client's Certificate arrives) and the names its CertificateRequest lists (built after this
// callback).
int Server::Impl::install_key_pair(SSL* ssl, void* arg) {
  auto* self = static_cast<Impl*>(arg);
  const certs::KeyPairPtr pair = self->key_pair.load();
  if (!pair) return 0;
  if (SSL_use_certificate(ssl, pair->certificate()) != 1 ||
      SSL_use_PrivateKey(ssl, pair->key()) != 1 || SSL_set1_chain(ssl, pair->chain()) != 1) {
    ERR_clear_error();
    return 0;
  }
  if (self->config.client_ca_path.empty()) return 1;
  const certs::ClientCaPtr ca = self->client_ca.load();
  STACK_OF(X509_NAME)* names = ca ? SSL_dup_CA_list(ca->names()) : nullptr;
  if (names == nullptr || SSL_set1_verify_cert_store(ssl, ca->store()) != 1) {
    if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
    ERR_clear_error();
    return 0;
  }
  SSL_set_client_CA_list(ssl, names);
  return 1;
}

bool Server::Impl::setup_tls(SSL_CTX& ctx) {
  // cpp-httplib's own constructors allow TLS 1.1; the SPEC wants 1.2 at least.
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(
      &ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(&ctx, kTls12Ciphers) != 1 ||
      SSL_CTX_set_ciphersuites(&ctx, kTls13Suites) != 1) {
    tls_setup_error = "TLS: cannot set the cipher suites";
    return false;
  }
  SSL_CTX_set1_groups_list(&ctx, "X25519:P-256:P-384");
  // OpenSSL's server session cache holds up to 20,480 sessions by default: bounded, so that a
  // flood of handshakes cannot leave that many behind. The API server keeps its connections.
  SSL_CTX_sess_set_cache_size(&ctx, 1024);
  static const unsigned char kSessionContext[] = "gpuadmit";
  SSL_CTX_set_session_id_context(&ctx, kSessionContext, sizeof kSessionContext - 1);
  SSL_CTX_set_cert_cb(&ctx, &Impl::install_key_pair, this);
  if (!config.client_ca_path.empty()) {
    // The CAs themselves are installed per handshake (install_key_pair), reloaded by the watcher.
    client_ca_signature = certs::file_signature(config.client_ca_path);
    auto loaded = certs::ClientCa::load(config.client_ca_path);
    if (auto* error = std::get_if<std::string>(&loaded)) {
      tls_setup_error = *error;
      return false;
    }
    client_ca.store(std::get<certs::ClientCaPtr>(std::move(loaded)));
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return true;
}

void Server::Impl::reject(const httplib::Request& req, httplib::Response& res, int status,
                          std::string_view message) {
  reply_error(res, status, message);
  // The body was not read: the connection cannot carry another request.
  close_after_response(req, res);
  metrics.rejected.add({std::to_string(status)});
  if (logger.enabled(LogLevel::kWarn)) {
    Json fields = Json::object();
    fields["status"] = status;
    fields["error"] = message;
    fields["method"] = req.method;
    fields["path"] = req.path.size() > 200 ? req.path.substr(0, 200) + "..." : req.path;
    fields["remote"] = req.remote_addr;
    logger.warn("request refused", fields);
  }
}

// Runs on the headers alone, before cpp-httplib reads any body (pre-routing handler and the
// Expect: 100-continue handler): cpp-httplib 0.11.4 checks only Content-Length against the
// payload limit and would read a chunked body of any size into memory.
bool Server::Impl::precheck(const httplib::Request& req, httplib::Response& res) {
  const bool review = req.path == "/mutate" || req.path == "/validate";
  const bool probe = req.path == "/healthz" || req.path == "/readyz";
  if (!review && !probe) {
    reject(req, res, 404,
           "no such endpoint; use POST /mutate, POST /validate, GET /healthz, GET /readyz");
    return false;
  }
  if (review && req.method != "POST") {
    res.set_header("Allow", "POST");
    reject(req, res, 405, "method " + req.method + " not allowed on " + req.path + "; use POST");
    return false;
  }
  if (probe && req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    reject(req, res, 405, "method " + req.method + " not allowed on " + req.path + "; use GET");
    return false;
  }
  return precheck_body(req, res, review, probe);
}

bool Server::Impl::precheck_body(const httplib::Request& req, httplib::Response& res, bool review,
                                 bool probe) {
  if (req.has_header("Transfer-Encoding")) {
    reject(req, res, 411, "chunked request bodies are not accepted; send Content-Length");
    return false;
  }
  // "identity" in any case was removed by the request hook (webhook/httplib_bridge.cc).
  if (req.has_header("Content-Encoding")) {
    const std::string encoding = req.get_header_value("Content-Encoding");
    reject(req, res, 415,
           "compressed request bodies are not accepted (Content-Encoding: " +
               encoding.substr(0, 40) + ")");
    return false;
  }
  const size_t length_headers = req.get_header_value_count("Content-Length");
  if (length_headers > 1) {
    reject(req, res, 400, "more than one Content-Length header");
    return false;
  }
  std::uint64_t length = 0;
  if (length_headers == 1) {
    const std::string text = req.get_header_value("Content-Length");
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
    if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
      reject(req, res, 400, "Content-Length is not a number");
      return false;
    }
    if (ec == std::errc::result_out_of_range || length > config.max_body) {
      reject(req, res, 413,
             "request body of " + text + " bytes exceeds --max-body " +
                 std::to_string(config.max_body));
      return false;
    }
  } else if (review) {
    reject(req, res, 411, "Content-Length is required");
    return false;
  }
  if (probe && length > 0) {
    reject(req, res, 400, "a probe takes no request body");
    return false;
  }
  return true;
}

void Server::Impl::handle_review(const httplib::Request& req, httplib::Response& res,
                                 Endpoint endpoint) {
  if (draining.load(std::memory_order_relaxed)) {
    // Answered in full, but the client should open its next connection to a ready replica.
    close_after_response(req, res);
  }
  ReviewReply reply =
      review(endpoint, req.get_header_value("Content-Type"), req.body, req.remote_addr);
  res.status = reply.status;
  res.set_content(reply.body, kJson);
}

// A request the connection pool refuses before anyone parses it (header limits, a request not
// received in time): the same JSON shape and headers as the pre-routing check's refusals.
void Server::Impl::refuse_in_pool(TlsStream& stream, int status, std::string_view message) {
  const std::string body = json_error(message);
  const std::string head = response_head(status, body.size(), /*close=*/true,
                                         config.keep_alive_timeout.count(), kKeepAliveMaxCount);
  stream.write(head.data(), head.size());
  stream.write(body.data(), body.size());
  metrics.rejected.add({std::to_string(status)});
  if (logger.enabled(LogLevel::kWarn)) {
    std::string remote;
    int remote_port = 0;
    stream.get_remote_ip_and_port(remote, remote_port);
    logger.warn("request refused", {{"status", status}, {"error", message}, {"remote", remote}});
  }
}

// The review fast path (webhook/review_fast_path.h): a plain review answered from the buffered
// bytes, with the same status line and headers cpp-httplib would write. Not while draining:
// cpp-httplib's answers then carry "Connection: close" next to Keep-Alive, which this does
// not reproduce.
std::optional<bool> Server::Impl::serve_plain_review(TlsStream& stream, bool last,
                                                     bool& connection_closed) {
  if (!review_fast_path || draining.load(std::memory_order_relaxed)) return std::nullopt;
  const std::optional<PlainReview> plain =
      plain_review(stream.buffered(), frame_request(stream.buffered(), config.max_body));
  if (!plain) return std::nullopt;
  std::string remote;
  int remote_port = 0;
  stream.get_remote_ip_and_port(remote, remote_port);
  ReviewReply reply;
  bool close = last || plain->connection_close;
  try {
    reply = review(plain->endpoint, plain->content_type, plain->body, remote);
  } catch (const std::exception& e) {
    // As the exception handler answers on cpp-httplib's path.
    reply = {500, json_error("internal error")};
    close = true;
    metrics.rejected.add({"500"});
    logger.error("internal error",
                 {{"error", e.what()},
                  {"path", plain->endpoint == Endpoint::kMutate ? "/mutate" : "/validate"}});
  }
  metrics.fast_path_reviews.fetch_add(1, std::memory_order_relaxed);
  stream.consume(plain->size);
  const std::string head = response_head(reply.status, reply.body.size(), close,
                                         config.keep_alive_timeout.count(), kKeepAliveMaxCount);
  stream.write(head.data(), head.size());
  stream.write(reply.body.data(), reply.body.size());
  connection_closed = close;
  return true;
}

Server::Impl::ReviewReply Server::Impl::review(Endpoint endpoint, std::string_view content_type,
                                               std::string_view body, std::string_view remote) {
  const auto start = Clock::now();
  const std::string_view endpoint_name = endpoint == Endpoint::kMutate ? "mutate" : "validate";
  if (!is_json_content_type(content_type)) {
    return refuse_review(endpoint_name, 415, "Content-Type must be application/json", remote, -1);
  }
  const PolicyPtr current = policy.load();
  const std::unique_ptr<const ClaimResolver> claims =
      config.claims_for_review ? config.claims_for_review() : nullptr;
  AdmissionResult result =
      handle_admission_review_text(body, endpoint, pipeline, *current, claims.get(),
                                   config.templates, config.priority_classes, config.nodes);
  const std::uint64_t micros = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
  (endpoint == Endpoint::kMutate ? metrics.mutate_latency : metrics.validate_latency)
      .observe(micros);
  if (result.error) {
    return refuse_review(endpoint_name, 400, result.error->message, remote,
                         static_cast<std::int64_t>(micros));
  }
  const AdmissionOutcome& outcome = *result.outcome;
  const bool allowed = response_allowed(outcome.response);
  const bool patched = endpoint == Endpoint::kMutate && outcome.evaluation.changed();
  count_decision(endpoint_name, outcome, allowed, patched);
  if (logger.enabled(LogLevel::kInfo))
    log_decision(endpoint_name, outcome, allowed, patched, micros);
  return {200, encode_response(outcome)};
}

Server::Impl::ReviewReply Server::Impl::refuse_review(std::string_view endpoint_name, int status,
                                                      std::string_view message,
                                                      std::string_view remote,
                                                      std::int64_t micros) {
  metrics.requests.add({endpoint_name, "", "", "error"});
  Json fields = {
      {"endpoint", endpoint_name}, {"status", status}, {"error", message}, {"remote", remote}};
  if (micros >= 0) fields["latency_us"] = micros;
  logger.warn("bad request", fields);
  return {status, json_error(message)};
}

bool Server::Impl::response_allowed(const Json& review_response) {
  if (const Json* response = find_member(review_response, "response")) {
    if (const Json* a = find_member(*response, "allowed"); a != nullptr && a->is_boolean()) {
      return a->get<bool>();
    }
  }
  return true;
}

// Label values from a closed set (metric_labels.h): a review cannot create series.
void Server::Impl::count_decision(std::string_view endpoint_name, const AdmissionOutcome& outcome,
                                  bool allowed, bool patched) {
  metrics.requests.add({endpoint_name, operation_label(outcome.operation), kind_label(outcome.kind),
                        allowed ? std::string_view("allowed") : std::string_view("denied")});
  const std::string& tenant = outcome.evaluation.tenant;
  for (const Finding& f : outcome.evaluation.findings) {
    metrics.violations.add({f.rule, severity_name(f.severity)});
    metrics.findings.add({f.rule, f.audit ? "audit" : severity_name(f.severity), tenant});
  }
  if (patched) {
    for (const std::string& m : outcome.evaluation.mutations) metrics.mutations.add({m, tenant});
  }
  if (const std::optional<MutationFailure>& failed = outcome.evaluation.mutation_failure) {
    metrics.mutation_errors.add({failed->mutator});
    // Always logged (warn), whatever the decision log's level: a mutator failing is a bug.
    logger.warn("mutation failed", {{"uid", outcome.uid.substr(0, kMaxLoggedValue)},
                                    {"kind", outcome.kind.substr(0, kMaxLoggedValue)},
                                    {"namespace", outcome.ns.substr(0, kMaxLoggedValue)},
                                    {"name", outcome.name.substr(0, kMaxLoggedValue)},
                                    {"mutator", failed->mutator},
                                    {"path", failed->path},
                                    {"reason", failed->reason},
                                    {"allowed", allowed}});
  }
}

// The decision line's members written directly: no Json object per review.
void Server::Impl::log_decision(std::string_view endpoint_name, const AdmissionOutcome& outcome,
                                bool allowed, bool patched, std::uint64_t micros) {
  thread_local std::string members;
  members.clear();
  // A review's strings are client text: each is cut at kMaxLoggedValue bytes, so a 1 MB kind
  // is not a 1 MB log line (Kubernetes names are at most 253 bytes).
  auto add_string = [](std::string_view key, std::string_view value) {
    members += members.empty() ? "\"" : ",\"";
    members += key;
    members += "\":";
    append_json_string(members, value.substr(0, kMaxLoggedValue), Json::error_handler_t::replace);
  };
  auto add_list = [](std::string_view key, auto&& items, auto&& text) {
    members += ",\"";
    members += key;
    members += "\":[";
    bool first = true;
    for (const auto& item : items) {
      if (!first) members += ',';
      first = false;
      append_json_string(members, text(item), Json::error_handler_t::replace);
    }
    members += ']';
  };
  add_string("endpoint", endpoint_name);
  add_string("uid", outcome.uid);
  add_string("operation", outcome.operation);
  add_string("kind", outcome.kind);
  add_string("namespace", outcome.ns);
  add_string("name", outcome.name);
  members += allowed ? ",\"allowed\":true" : ",\"allowed\":false";
  add_list("rules", outcome.evaluation.findings,
           [](const Finding& f) -> std::string_view { return f.rule; });
  static const std::vector<std::string> kNone;
  add_list("mutations", patched ? outcome.evaluation.mutations : kNone,
           [](const std::string& m) -> std::string_view { return m; });
  members += ",\"latency_us\":";
  members += std::to_string(micros);
  logger.log_members(LogLevel::kInfo, "decision", members);
}

void Server::Impl::configure_http() {
  configure_https_server();
  const char* fast_path_setting = std::getenv("GPUADMIT_REVIEW_FAST_PATH");
  review_fast_path = fast_path_setting == nullptr || std::string_view(fast_path_setting) != "off";
  https.start_pool(
      connection_limits(), static_cast<size_t>(config.threads),
      [this](TlsStream& stream, bool last, bool& connection_closed) {
        return serve_plain_review(stream, last, connection_closed);
      },
      [this](TlsStream& stream, int status, std::string_view message) {
        refuse_in_pool(stream, status, message);
      });
  install_refusal_handlers();
  install_routes();
  configure_metrics_server();
}

// Defaults that cost: Nagle adds ~40 ms per kept-alive response, and 5 requests per connection
// forces a TLS handshake every 5 reviews.
void Server::Impl::configure_https_server() {
  https.set_socket_options(socket_options);
  https.set_tcp_nodelay(true);
  https.set_keep_alive_max_count(kKeepAliveMaxCount);
  https.set_keep_alive_timeout(config.keep_alive_timeout.count());
  https.set_read_timeout(config.io_timeout.count(), 0);
  https.set_write_timeout(config.io_timeout.count(), 0);
  https.set_payload_max_length(config.max_body);  // backstop; precheck answers first
}

ConnectionLimits Server::Impl::connection_limits() const {
  ConnectionLimits limits;
  limits.io_timeout = config.io_timeout;
  limits.keep_alive_timeout = config.keep_alive_timeout;
  limits.max_requests = kKeepAliveMaxCount;
  limits.max_body = config.max_body;
  limits.request_timeout = config.request_timeout;
  limits.memory_budget = config.memory_budget;
  return limits;
}

// The pre-routing check, the Expect: 100-continue answer, and cpp-httplib's own refusals and
// exceptions, all in the same one-line JSON shape.
void Server::Impl::install_refusal_handlers() {
  https.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return precheck(req, res) ? httplib::Server::HandlerResponse::Unhandled
                              : httplib::Server::HandlerResponse::Handled;
  });
  https.set_expect_100_continue_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        if (precheck(req, res)) return 100;
        // cpp-httplib writes this early answer without framing it: say how long it is.
        res.set_header("Content-Length", std::to_string(res.body.size()));
        return res.status;
      });
  https.set_exception_handler(
      [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        reply_error(res, 500, "internal error");
        close_after_response(req, res);
        metrics.rejected.add({"500"});
        logger.error("internal error", {{"error", what}, {"path", req.path}});
      });
  // After such an error the request stream is in an unknown state (a body half read after a
  // read timeout, a malformed request line): the connection is closed too.
  https.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req,
                                                                  httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    close_after_response(req, res);
    res.set_content(json_error("HTTP " + std::to_string(res.status) + ": request refused"), kJson);
    return httplib::Server::HandlerResponse::Handled;
  }));
}

// Literal paths: a regex route in cpp-httplib 0.11.4 runs std::regex on the path, which recurses
// per character and can overflow the stack on a long one.
void Server::Impl::install_routes() {
  https.Post("/mutate", [this](const httplib::Request& req, httplib::Response& res) {
    handle_review(req, res, Endpoint::kMutate);
  });
  https.Post("/validate", [this](const httplib::Request& req, httplib::Response& res) {
    handle_review(req, res, Endpoint::kValidate);
  });
  install_probes(https);
}

// /healthz and /readyz. On the metrics listener too: with --client-ca every TLS client must
// present a certificate, and a kubelet's HTTPS probe presents none.
void Server::Impl::install_probes(httplib::Server& server) {
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const std::string_view reason = not_ready_reason();
    if (reason.empty()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content(std::string(reason) + "\n", "text/plain");
    }
  });
}

void Server::Impl::configure_metrics_server() {
  metrics_http.set_socket_options(socket_options);
  metrics_http.set_tcp_nodelay(true);
  metrics_http.set_read_timeout(config.io_timeout.count(), 0);
  metrics_http.set_write_timeout(config.io_timeout.count(), 0);
  metrics_http.set_payload_max_length(4096);
  metrics_http.new_task_queue = [] { return new httplib::ThreadPool(2); };
  metrics_http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    metrics.ready.store(ready());
    std::string text = metrics.render();
    if (config.extra_metrics) config.extra_metrics(text);
    if (config.priority_classes != nullptr) {
      append_metric_header(text, "gpuadmit_priority_class_disagreements", "gauge",
                           "Differences between the policy's priorityClasses and the cluster's "
                           "(each logged; pods get the cluster's).");
      text += "gpuadmit_priority_class_disagreements " +
              std::to_string(priority_disagreement_count.load(std::memory_order_relaxed)) + "\n";
    }
    if (const ConnectionPool* pool = https.pool()) render_pool_counters(pool->counters(), text);
    res.set_content(text, "text/plain; version=0.0.4; charset=utf-8");
  });
  install_probes(metrics_http);
}

void Server::Impl::check_policy() {
  if (config.policy_path.empty()) return;  // the embedded policy never changes
  const certs::FileSignature now = certs::file_signature(config.policy_path);
  if (now == policy_signature) return;
  policy_signature = now;
  CompiledLoadResult loaded = load_compiled_policy(config.policy_path);
  if (!loaded.policy) {
    logger.error("policy reload failed; the previous policy keeps serving",
                 {{"path", config.policy_path}, {"errors", loaded.errors.size()}});
    for (const PolicyError& e : loaded.errors) {
      logger.error("policy error", {{"path", config.policy_path}, {"error", e.to_string()}});
    }
    // Each reload is counted once logged: whoever sees a counter move finds its lines in the
    // log (tests/webhook/reload_test.cpp waits for the counters, then reads the log).
    metrics.policy_reload_failure.fetch_add(1);
    return;
  }
  policy.store(std::move(loaded.policy));
  const std::uint64_t generation = metrics.policy_generation.load() + 1;
  logger.info("policy reloaded", {{"path", config.policy_path}, {"generation", generation}});
  metrics.policy_generation.fetch_add(1);
  metrics.policy_reload_success.fetch_add(1);
}

void Server::Impl::check_key_pair() {
  const certs::FileSignature cert_now = certs::file_signature(config.cert_path);
  const certs::FileSignature key_now = certs::file_signature(config.key_path);
  if (cert_now == cert_signature && key_now == key_signature) return;
  cert_signature = cert_now;
  key_signature = key_now;
  auto loaded = certs::KeyPair::load(config.cert_path, config.key_path);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    // Often transient: a rotation that writes the certificate and the key one after the other
    // is seen half-done; the next change of either file retries.
    logger.warn("certificate reload failed; the previous certificate keeps serving",
                {{"error", *error}});
    metrics.cert_reload_failure.fetch_add(1);
    return;
  }
  const certs::KeyPairPtr pair = std::get<certs::KeyPairPtr>(std::move(loaded));
  metrics.cert_expiry_unix.store(pair->not_after_unix());
  key_pair.store(pair);
  logger.info("certificate reloaded",
              {{"serial", pair->serial_hex()}, {"not_after", pair->not_after_unix()}});
  metrics.cert_reload_success.fetch_add(1);
}

// The client CA as the serving key pair: a changed file is loaded and installed for new
// handshakes; one that cannot be read leaves the previous CAs in force.
void Server::Impl::check_client_ca() {
  if (config.client_ca_path.empty()) return;
  const certs::FileSignature now = certs::file_signature(config.client_ca_path);
  if (now == client_ca_signature) return;
  client_ca_signature = now;
  auto loaded = certs::ClientCa::load(config.client_ca_path);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    logger.warn("client CA reload failed; the previous client CA stays in force",
                {{"error", *error}});
    metrics.client_ca_reload_failure.fetch_add(1);
    return;
  }
  const certs::ClientCaPtr ca = std::get<certs::ClientCaPtr>(std::move(loaded));
  client_ca.store(ca);
  logger.info("client CA reloaded",
              {{"path", config.client_ca_path}, {"certificates", ca->size()}});
  metrics.client_ca_reload_success.fetch_add(1);
}

void Server::Impl::check_priority_classes() {
  const PriorityClassSource* cluster = config.priority_classes;
  if (cluster == nullptr || !cluster->synced()) return;
  const std::uint64_t generation = metrics.policy_generation.load();
  const PolicyPtr current = policy.load();
  if (generation == checked_policy_generation && cluster->version() == checked_priority_version) {
    return;
  }
  checked_policy_generation = generation;
  checked_priority_version = cluster->version();
  std::vector<std::string> now = priority_class_disagreements(*current, *cluster);
  priority_disagreement_count.store(now.size(), std::memory_order_relaxed);
  if (now == priority_disagreements) return;
  priority_disagreements = std::move(now);
  if (priority_disagreements.empty()) {
    logger.info("the policy's priorityClasses agree with the cluster's", {});
    return;
  }
  logger.warn("the policy's priorityClasses disagree with the cluster's; pods get the cluster's",
              {{"disagreements", priority_disagreements}});
}

void Server::Impl::watch_loop() {
  std::unique_lock<std::mutex> lock(watch_mutex);
  while (!stop_watching) {
    watch_cv.wait_for(lock, config.watch_interval, [this] { return stop_watching; });
    if (stop_watching) break;
    lock.unlock();
    try {
      check_key_pair();
      check_client_ca();
      check_policy();
      check_priority_classes();
    } catch (const std::exception& e) {
      logger.error("reload check failed", {{"error", e.what()}});
    }
    lock.lock();
  }
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_->https.is_running()) impl_->https.stop();
  if (impl_->metrics_http.is_running()) impl_->metrics_http.stop();
  {
    std::lock_guard<std::mutex> lock(impl_->watch_mutex);
    impl_->stop_watching = true;
  }
  impl_->watch_cv.notify_all();
  if (impl_->watcher.joinable()) impl_->watcher.join();
  if (impl_->metrics_thread.joinable()) impl_->metrics_thread.join();
}

void Server::Impl::bind_listeners(const std::pair<std::string, int>& https_listen,
                                  const std::optional<std::pair<std::string, int>>& metrics_listen,
                                  std::vector<std::string>& errors) {
  auto bind = [](auto& server, const std::pair<std::string, int>& address) {
    const int port =
        address.second == 0
            ? server.bind_to_any_port(address.first)
            : (server.bind_to_port(address.first, address.second) ? address.second : -1);
    if (port > 0) ::listen(server.listening_socket(), kListenBacklog);
    return port;
  };
  port = bind(https, https_listen);
  if (port <= 0) {
    errors.push_back("--listen " + config.listen + ": cannot bind (in use or not local?)");
  }
  if (metrics_listen) {
    metrics_enabled = true;
    metrics_port = bind(metrics_http, *metrics_listen);
    if (metrics_port <= 0) {
      errors.push_back("--metrics-listen " + config.metrics_listen +
                       ": cannot bind (in use or not local?)");
    }
  }
}

namespace {

// The settings Server::create checks before it builds anything (the addresses aside).
void check_settings(const ServerConfig& config, std::vector<std::string>& errors) {
  if (config.threads < 1 || config.threads > 4096) {
    errors.push_back("--threads must be from 1 to 4096");
  }
  if (config.max_body < 1024) errors.push_back("--max-body must be at least 1024 bytes");
  if (config.shutdown_delay >= config.shutdown_deadline) {
    errors.push_back("--shutdown-delay must be shorter than --shutdown-deadline");
  }
  if (config.cert_path.empty()) errors.push_back("--tls-cert is required");
  if (config.key_path.empty()) errors.push_back("--tls-key is required");
}

}  // namespace

Expected<std::unique_ptr<Server>, std::vector<std::string>> Server::create(ServerConfig config,
                                                                           const Pipeline& pipeline,
                                                                           const Logger& logger) {
  std::vector<std::string> errors;
  const auto listen = parse_listen_address(config.listen);
  if (!listen) errors.push_back("--listen " + config.listen + ": expected HOST:PORT or :PORT");
  std::optional<std::pair<std::string, int>> metrics_listen;
  if (config.metrics_listen != "off") {
    metrics_listen = parse_listen_address(config.metrics_listen);
    if (!metrics_listen) {
      errors.push_back("--metrics-listen " + config.metrics_listen +
                       ": expected HOST:PORT, :PORT or off");
    }
  }
  check_settings(config, errors);

  auto impl = std::make_unique<Impl>(std::move(config), pipeline, logger);
  if (!impl->https.is_valid()) {
    errors.push_back(impl->tls_setup_error.empty() ? "TLS: cannot create the SSL context"
                                                   : impl->tls_setup_error);
  }
  CompiledLoadResult loaded = load_compiled_policy(impl->config.policy_path);
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) errors.push_back(e.to_string());
  }
  if (!impl->config.cert_path.empty() && !impl->config.key_path.empty()) {
    impl->cert_signature = certs::file_signature(impl->config.cert_path);
    impl->key_signature = certs::file_signature(impl->config.key_path);
    auto pair = certs::KeyPair::load(impl->config.cert_path, impl->config.key_path);
    if (auto* error = std::get_if<std::string>(&pair)) {
      errors.push_back(*error);
    } else {
      const certs::KeyPairPtr& p = std::get<certs::KeyPairPtr>(pair);
      impl->metrics.cert_expiry_unix.store(p->not_after_unix());
      impl->key_pair.store(p);
    }
  }
  if (!errors.empty()) return Unexpected(std::move(errors));
  impl->policy_signature = certs::file_signature(impl->config.policy_path);
  impl->policy.store(std::move(loaded.policy));

  impl->configure_http();
  impl->bind_listeners(*listen, metrics_listen, errors);
  if (!errors.empty()) return Unexpected(std::move(errors));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

int Server::port() const { return impl_->port; }
int Server::metrics_port() const { return impl_->metrics_port; }
bool Server::ready() const { return impl_->ready(); }

const Metrics& Server::metrics() const { return impl_->metrics; }

bool Server::run() {
  Impl& impl = *impl_;
  impl.watcher = std::thread([&impl] { impl.watch_loop(); });
  if (impl.metrics_enabled) {
    impl.metrics_thread = std::thread([&impl] { impl.metrics_http.listen_after_bind(); });
  }
  impl.run_started.store(true);
  // Returns after stop(): the accept loop ends, then the pool joins its workers, each of which
  // finishes the request it is serving first.
  const bool ok = impl.https.listen_after_bind() && impl.https.pool()->stopped_cleanly();
  if (impl.metrics_enabled) {
    // The metrics listener may not have entered its accept loop yet.
    for (int i = 0; i < 5000 && !impl.metrics_http.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    impl.metrics_http.stop();
    impl.metrics_thread.join();
  }
  {
    std::lock_guard<std::mutex> lock(impl.watch_mutex);
    impl.stop_watching = true;
  }
  impl.watch_cv.notify_all();
  impl.watcher.join();
  return ok;
}

void Server::shutdown() {
  Impl& impl = *impl_;
  {
    std::lock_guard<std::mutex> lock(impl.shutdown_mutex);
    if (impl.shutdown_done) return;
    impl.shutdown_done = true;
  }
  const auto deadline = Clock::now() + impl.config.shutdown_deadline;
  impl.draining.store(true);
  impl.metrics.ready.store(false);
  impl.logger.info("draining", {{"shutdown_delay_ms", impl.config.shutdown_delay.count()},
                                {"shutdown_deadline_ms", impl.config.shutdown_deadline.count()}});
  // Still serving, /readyz failing: the endpoints controller and kube-proxy stop sending here.
  std::this_thread::sleep_for(impl.config.shutdown_delay);
  if (ConnectionPool* pool = impl.https.pool()) pool->set_stop_deadline(deadline);
  // stop() does nothing before listen_after_bind has started: wait for it (bounded).
  for (int i = 0; i < 5000 && !impl.https.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl.https.stop();
}

}  // namespace gpuadmit::webhook
