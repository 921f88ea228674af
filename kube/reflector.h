#pragma once
// Keeps a cache of one cluster-scoped collection current, as client-go's reflector keeps an
// informer's store (k8s.io/client-go/tools/cache/reflector.go, ListAndWatch): a list, then a
// watch from the list's resourceVersion, on a thread of its own. What is kept of each object
// and how it is listed is the cache's (ReflectorCache); the loop is this file's, shared by
// kube/priority_class_watch.h and kube/node_watch.h.
//
//   GET <path>?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=N
//
// A watch ended by the server (timeoutSeconds) is started again from the last resourceVersion
// seen (an event's or a BOOKMARK's); an ERROR event with code 410 (the version was compacted
// away), a 410 answer, an event that is not one or any failure lists again, after a pause that
// doubles from retry_min to retry_max while failures last. What the cache answers meanwhile
// is the cache's: the last complete list.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "engine/json.h"
#include "kube/api_client.h"
#include "kube/in_cluster.h"

namespace gpuadmit::kube {

struct ReflectorConfig {
  InClusterAccess access;
  // Per connect/read/write of a list (kube/api_client.h); a watch's read waits up to
  // watch_timeout plus this for the server's next event or bookmark.
  std::chrono::milliseconds timeout{5000};
  std::chrono::seconds watch_timeout{300};  // the watch's timeoutSeconds
  std::chrono::milliseconds retry_min{500}, retry_max{30000};
  // Called on the reflector's thread: a failure (one line), and a change of what the cache
  // answers (after each complete list, and after each received batch of events that changed it).
  std::function<void(const std::string& error)> on_error;
  std::function<void()> on_change;
};

// What a reflector keeps current. Called on the reflector's thread only.
class ReflectorCache {
 public:
  virtual ~ReflectorCache() = default;
  // Lists the whole collection and replaces what the cache holds only when the list is
  // complete. Success: "" and `version` set to the list's resourceVersion; failure: the error.
  virtual std::string list(const ApiClient& api, const std::string& token,
                           std::string& version) = 0;
  // An ADDED, MODIFIED or DELETED object: true when what the cache answers changed.
  virtual bool apply(std::string_view type, const Json& object) = 0;
  // After a complete list, and after a batch of events of which one changed the cache.
  virtual void publish() {}
};

// What a reflector has done, for /metrics.
struct ReflectorCounts {
  std::uint64_t lists = 0;   // successful lists
  std::uint64_t events = 0;  // watch events that changed the cache
  std::uint64_t errors = 0;  // failed lists and watches
};

class Reflector {
 public:
  // Starts the thread; `cache` must outlive the reflector. `path`: the collection
  // ("/api/v1/nodes"), with any server path prefix.
  Reflector(std::string path, ReflectorConfig config, ReflectorCache& cache);
  ~Reflector();  // stops the watch (without waiting for it to end) and joins the thread
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  ReflectorCounts counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An object's metadata.resourceVersion ("" when absent).
std::string resource_version(const Json& object);

}  // namespace gpuadmit::kube
