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
// Listed and watched again as kube/reflector.h says; the last classes listed keep answering
// meanwhile.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/json.h"
#include "engine/priority_classes.h"
#include "kube/reflector.h"

namespace gpuadmit::kube {

// The reflector's settings (kube/reflector.h).
struct PriorityClassWatchConfig : ReflectorConfig {};

// What the watch has done, for /metrics.
struct PriorityClassWatchCounts {
  std::uint64_t lists = 0;   // successful lists
  std::uint64_t events = 0;  // watch events that changed the cache (added, modified, deleted)
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
