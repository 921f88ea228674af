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
// Listed and watched again as kube/reflector.h says; the last Nodes listed keep answering
// meanwhile. A MODIFIED event that changes neither
// labels nor taints (the kubelet's status updates, most of them) changes nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/node_source.h"
#include "kube/reflector.h"

namespace gpuadmit::kube {

// The reflector's settings (kube/reflector.h), with a longer timeout for a page of Nodes.
struct NodeWatchConfig : ReflectorConfig {
  NodeWatchConfig() { timeout = std::chrono::milliseconds(10000); }
  // Nodes per list page: a Node with its status and image list is tens of kilobytes.
  std::int64_t page_size = 100;
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
