#pragma once
// The cluster's PriorityClasses for the webhook (`gpuadmit serve --cluster-priority-classes`,
// docs/mutations.md "Priority"), read-only: listed once, then watched from the list's
// resourceVersion, as client-go's reflector keeps the Priority admission plugin's lister — the
// same objects the plugin resolves a pod's priorityClassName with. Every lookup is answered from
// the cache (so the service account needs list and watch, no get); until the first list has
// succeeded synced() is false and the webhook is not ready.
//
//   PriorityClassWatch classes(config);    // starts a thread
//   options.priority_classes = &classes;   // EvaluateOptions
//
// Requests (scheduling.k8s.io/v1 is GA since Kubernetes 1.14):
//   GET /apis/scheduling.k8s.io/v1/priorityclasses
//   GET /apis/scheduling.k8s.io/v1/priorityclasses?watch=true&resourceVersion=RV
//       &allowWatchBookmarks=true&timeoutSeconds=N
// A watch ended by the server (timeoutSeconds) is started again from the last resourceVersion
// seen; an ERROR event with code 410 (the version has been compacted away), a 410 answer or any
// failure lists again, after a pause that doubles from retry_min to retry_max while failures
// last. The last classes listed keep answering meanwhile.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/json.h"
#include "engine/priority_classes.h"
#include "kube/in_cluster.h"

namespace gpuadmit::kube {

struct PriorityClassWatchConfig {
  InClusterAccess access;
  // Per connect/read/write of the list (kube/api_client.h); a watch's read waits up to
  // watch_timeout plus this for the server's next event or bookmark.
  std::chrono::milliseconds timeout{5000};
  std::chrono::seconds watch_timeout{300};  // the watch's timeoutSeconds
  std::chrono::milliseconds retry_min{500}, retry_max{30000};
  // Called on the watch's thread: a failure (one line), and a change of what the cache answers.
  std::function<void(const std::string& error)> on_error;
  std::function<void()> on_change;
};

// What the watch has done, for /metrics.
struct PriorityClassWatchCounts {
  std::uint64_t lists = 0;   // successful lists
  std::uint64_t events = 0;  // watch events applied (ADDED, MODIFIED, DELETED)
  std::uint64_t errors = 0;  // failed lists and watches
  std::size_t classes = 0;   // classes in the cache now
};

class PriorityClassWatch final : public PriorityClassSource {
 public:
  explicit PriorityClassWatch(PriorityClassWatchConfig config);
  ~PriorityClassWatch() override;  // stops the watch and joins its thread
  PriorityClassWatch(const PriorityClassWatch&) = delete;
  PriorityClassWatch& operator=(const PriorityClassWatch&) = delete;

  std::optional<ClusterPriorityClass> find(std::string_view name) const override;
  std::optional<ClusterPriorityClass> global_default() const override;
  bool synced() const override;
  std::uint64_t version() const override;

  PriorityClassWatchCounts counts() const;
  // gpuadmit_priority_classes_synced, gpuadmit_priority_classes and
  // gpuadmit_priority_class_watch_{lists,events,errors}_total in the Prometheus text format.
  void render_metrics(std::string& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A PriorityClass object (scheduling.k8s.io/v1) as the cache holds it; nullopt when it has no
// name or its value is not a 32-bit integer. preemptionPolicy absent: PreemptLowerPriority.
std::optional<ClusterPriorityClass> parse_priority_class(const Json& object);

}  // namespace gpuadmit::kube
