#pragma once
// The cluster's Nodes for the webhook (`gpuadmit serve --node-watch`, docs/rules.md GPU009),
// read-only: listed page by page, then watched from the list's resourceVersion, as client-go's
// reflector keeps a Node informer. Only what GPU009 reads is kept — each Node's name, labels and
// taints (engine/node_source.h parse_node), never its status (conditions, images, addresses),
// so the cache holds a few kilobytes per Node however large the objects are. Every lookup is
// answered from the cache: the service account needs list and watch on nodes, no get. Until
// the first list has succeeded synced() is false and the webhook is not ready.
//
//   NodeWatch nodes(config);          // starts a thread
//   options.nodes = &nodes;           // EvaluateOptions
//
// Requests (core/v1):
//   GET /api/v1/nodes?limit=N[&continue=TOKEN]                  (kube/list.h list_all)
//   GET /api/v1/nodes?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=N
// A watch ended by the server (timeoutSeconds) is started again from the last resourceVersion
// seen; an ERROR event with code 410 (the version has been compacted away), a 410 answer or any
// failure lists again, after a pause that doubles from retry_min to retry_max while failures
// last. The last Nodes listed keep answering meanwhile. A MODIFIED event that changes neither
// labels nor taints (the kubelet's status updates, most of them) changes nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/node_source.h"
#include "kube/in_cluster.h"

namespace gpuadmit::kube {

struct NodeWatchConfig {
  InClusterAccess access;
  // Per connect/read/write of a list page (kube/api_client.h); a watch's read waits up to
  // watch_timeout plus this for the server's next event or bookmark.
  std::chrono::milliseconds timeout{10000};
  std::chrono::seconds watch_timeout{300};  // the watch's timeoutSeconds
  std::chrono::milliseconds retry_min{500}, retry_max{30000};
  // Nodes per list page: a Node with its status and image list is tens of kilobytes.
  std::int64_t page_size = 100;
  // Called on the watch's thread: a failure (one line), and a change of what the cache answers.
  std::function<void(const std::string& error)> on_error;
  std::function<void()> on_change;
};

// What the watch has done, for /metrics.
struct NodeWatchCounts {
  std::uint64_t lists = 0;   // successful lists
  std::uint64_t events = 0;  // watch events that changed the cache (added, labels or taints
                             // modified, deleted)
  std::uint64_t errors = 0;  // failed lists and watches
  std::size_t nodes = 0;     // Nodes in the cache now
};

class NodeWatch final : public NodeSource {
 public:
  explicit NodeWatch(NodeWatchConfig config);
  ~NodeWatch() override;  // stops the watch and joins its thread
  NodeWatch(const NodeWatch&) = delete;
  NodeWatch& operator=(const NodeWatch&) = delete;

  std::optional<ClusterNode> find(std::string_view name) const override;
  bool synced() const override;

  NodeWatchCounts counts() const;
  // gpuadmit_nodes_synced, gpuadmit_nodes and gpuadmit_node_watch_{lists,events,errors}_total in
  // the Prometheus text format.
  void render_metrics(std::string& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuadmit::kube
