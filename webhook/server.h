#pragma once
// The admission webhook server (SPEC §7): POST /mutate, POST /validate, GET /healthz and
// GET /readyz over TLS, Prometheus metrics (and the same two probes, for kubelets that cannot
// present a client certificate) on a separate plain listener, hot reload of the serving key pair
// and of the policy, graceful drain with a deadline. A thin, defensive adapter around the
// engine's AdmissionReview codec; what it needs of cpp-httplib's internals is in
// webhook/httplib_bridge.h.
//
//   auto created = Server::create(config, pipeline, logger);  // an Expected (engine/expected.h)
//   if (!created) return report(created.error());               // every startup error
//   Server& server = **created;
//   std::thread signals([&] { wait_for_sigterm(); server.shutdown(); });
//   server.run();  // returns once drained

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/controllers.h"
#include "engine/expected.h"
#include "engine/node_source.h"
#include "engine/pipeline.h"
#include "engine/priority_classes.h"
#include "webhook/log.h"
#include "webhook/metrics.h"

namespace gpuadmit::webhook {

struct ServerConfig {
  std::string policy_path;  // empty: the embedded default policy (not watched)
  std::string cert_path, key_path;
  std::string client_ca_path;  // non-empty: clients must present a certificate it signed
  std::string listen = ":8443";
  std::string metrics_listen = ":9090";  // "off": no metrics listener
  // Threads serving connections (webhook/connection_pool.h). A connection holds none while it
  // waits, so this is not the number of connections. 6 on 2 cores: measured best of 4 to 10
  // with 2, 8 and 32 busy connections since reviews take the fast path (docs/performance.md,
  // "Webhook"); more threads than that are woken for events the finishing one would take.
  int threads = 6;
  std::size_t max_body = 3u << 20;  // the API server's own request limit is 3 MiB
  // Request bytes buffered and large reviews being parsed, across connections
  // (webhook/connection_pool.h): when spent, connections that need more wait, unread.
  std::size_t memory_budget = 96u << 20;
  std::chrono::milliseconds watch_interval{1000};
  // Between SIGTERM and closing the listener: /readyz already fails and requests are still
  // served, so the endpoints controller and kube-proxy drop the pod before it stops accepting.
  std::chrono::milliseconds shutdown_delay{0};
  // From SIGTERM: what is still open then is closed and the shutdown logged as not clean. Under
  // the chart's 30 s terminationGracePeriodSeconds, so the kubelet never has to SIGKILL.
  std::chrono::milliseconds shutdown_deadline{20000};
  std::chrono::seconds io_timeout{5};                // the handshake; a response not being read
  std::chrono::milliseconds request_timeout{10000};  // a whole request, first byte to last
  std::chrono::seconds keep_alive_timeout{10};       // idle kept-alive connection → closed
  // `serve --dra-lookup`: per review, what the engine asks about pods' DRA claims (kube/: its
  // lookups share one deadline); empty: nothing is looked up. Its metrics are appended to the
  // exposition by `extra_metrics`.
  std::function<std::unique_ptr<const ClaimResolver>()> claims_for_review;
  // `serve --cluster-priority-classes`: the cluster's PriorityClasses (kube/, watched; owned by
  // the caller, outliving the server); null: the policy's declarations stand in. /readyz fails
  // until they are synced(); a policy that disagrees with them is logged and counted.
  const PriorityClassSource* priority_classes = nullptr;
  // `serve --node-watch`: the cluster's Nodes (kube/node_watch.h, owned by the caller, outliving
  // the server), for GPU009's spec.nodeName; null: nodeName is not judged. /readyz fails until
  // they are synced().
  const NodeSource* nodes = nullptr;
  std::function<void(std::string&)> extra_metrics;
  // `serve --templates`: whether workload templates are mutated or only judged (GitOps;
  // engine/controllers.h TemplateMode, docs/install.md).
  TemplateMode templates = TemplateMode::kMutate;
};

// "HOST:PORT", ":PORT" (all IPv4 interfaces) or "[V6]:PORT"; port 0 picks a free port.
std::optional<std::pair<std::string, int>> parse_listen_address(const std::string& address);

class Server {
 public:
  // Loads the policy and the key pair, sets up TLS and binds both listeners. Every error at once,
  // each one line naming the file or flag.
  static Expected<std::unique_ptr<Server>, std::vector<std::string>> create(
      ServerConfig config, const Pipeline& pipeline, const Logger& logger);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;          // the bound HTTPS port
  int metrics_port() const;  // 0 when metrics are off

  // Serves until shutdown() has closed the listener and every in-flight request has finished.
  // Returns true on a clean drain.
  bool run();
  // Thread-safe and idempotent: /readyz fails at once, the listener closes after
  // shutdown_delay, run() returns when the workers are done or shutdown_deadline has passed
  // (then false: connections were closed unfinished).
  void shutdown();

  const Metrics& metrics() const;
  // What /readyz answers 200 for: policy and key pair loaded, the cluster's PriorityClasses and
  // Nodes listed (when watched), not draining.
  bool ready() const;

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuadmit::webhook
