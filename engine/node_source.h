#pragma once
// What the cluster's Nodes say, as far as GPU009 needs it: a Node's labels and taints by name.
// The engine only asks; the webhook's read-only watch answers (kube/node_watch.h, `serve
// --node-watch`), and so do the Node objects given to `review --nodes` and the tenant-attack
// suite. Without one (lint, review without --nodes, serve without the flag, the native
// policies) nothing about a Node is known and `spec.nodeName` is not judged (docs/rules.md,
// GPU009).
//
//   const NodeSource* nodes = options.nodes;     // may be null
//   if (nodes && nodes->synced())
//     if (std::optional<ClusterNode> n = nodes->find("gpu-a100-7")) gpu_pools_of_node(*n, policy);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

struct ClusterNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // metadata.labels, sorted by key
  std::vector<Taint> taints;                                // spec.taints, in order
};

class NodeSource {
 public:
  virtual ~NodeSource() = default;
  // Thread-safe, never throw. The Node of that name; nullopt when the cluster has none.
  virtual std::optional<ClusterNode> find(std::string_view name) const = 0;
  // False until the Nodes have been read once: until then find() means nothing.
  virtual bool synced() const { return true; }
};

// A core/v1 Node object as a source keeps it (its name, labels and taints; the rest, status
// above all, is not kept); nullopt when it has no name. Labels and taints that are not strings
// are skipped.
std::optional<ClusterNode> parse_node(const Json& object);

// The GPU classes whose pool `node` belongs to, in policy order: those whose nodeSelector the
// node's labels satisfy (every key with one of the class's values; with MIG strategy single the
// product label may carry GPU Feature Discovery's `-MIG-<profile>` suffix, engine/scheduling.h
// class_node_labels); when there are none, those one of whose taints the node carries (same key
// and effect, and the same value where the class names one) — a pool's taint is often shared by
// every pool (nvidia.com/gpu), its labels are not. A class without nodeSelector labels is never
// matched by labels. Empty: not a GPU pool's node.
std::vector<std::string> gpu_pools_of_node(const ClusterNode& node, const CompiledPolicy& policy);

// A NodeSource over Node objects given up front (`review --nodes`, the tests): each object
// parse_node accepts, the last one of a name winning.
class StaticNodeSource final : public NodeSource {
 public:
  explicit StaticNodeSource(const std::vector<Json>& nodes);
  std::optional<ClusterNode> find(std::string_view name) const override;
  std::size_t size() const { return nodes_.size(); }

 private:
  std::vector<ClusterNode> nodes_;
};

}  // namespace gpuadmit
