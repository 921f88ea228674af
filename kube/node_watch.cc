#include "kube/node_watch.h"

#include <atomic>
#include <map>
#include <mutex>

#include "engine/json_parse.h"
#include "kube/list.h"
#include "kube/reflector.h"

namespace gpuadmit::kube {
namespace {

constexpr const char* kNodesPath = "/api/v1/nodes";

// Names unique across kube/'s .cc files (a unity build puts them in one translation unit).
using NodeMap = std::map<std::string, ClusterNode, std::less<>>;

bool same_node(const ClusterNode& a, const ClusterNode& b) {
  if (a.labels != b.labels || a.taints.size() != b.taints.size()) return false;
  for (size_t i = 0; i < a.taints.size(); ++i) {
    const Taint &x = a.taints[i], &y = b.taints[i];
    if (x.key != y.key || x.value != y.value || x.effect != y.effect) return false;
  }
  return true;
}

// The cache: looked up by reviews, written by the reflector's thread. A lookup copies one entry
// under the lock; a change touches one entry, a list swaps the whole map.
struct NodeCache final : ReflectorCache {
  explicit NodeCache(std::int64_t page) : page_size(page) {}

  const std::int64_t page_size;
  mutable std::mutex mutex;
  NodeMap nodes;
  std::atomic<bool> synced{false};

  // Every page, into a new map that replaces the cache once the last page is in: a list that
  // fails half way leaves the last complete one answering.
  std::string list(const ApiClient& api, const std::string& token, std::string& version) override {
    NodeMap listed;
    std::string listed_version;
    std::string page_error;
    const ListResult r =
        list_all(api, token, kNodesPath, {.field_selector = "", .limit = page_size},
                 [&](const std::string& page) {
                   return read_page(page, listed, listed_version, page_error);
                 });
    if (!r.ok() || !page_error.empty()) return !page_error.empty() ? page_error : r.error;
    version = listed_version;
    {
      std::lock_guard<std::mutex> lock(mutex);
      nodes.swap(listed);
    }
    synced.store(true);
    return {};
  }

  static bool read_page(const std::string& page, NodeMap& listed, std::string& version,
                        std::string& error) {
    Json body;
    const Json* items = nullptr;
    if (parse_json(page, body) && string_member(body, "kind") == "NodeList") {
      items = find_member(body, "items");
    }
    if (items == nullptr || !items->is_array()) {
      error = "the API server's answer to GET " + std::string(kNodesPath) + " is not a NodeList";
      return false;
    }
    for (const Json& item : *items) {
      if (std::optional<ClusterNode> n = parse_node(item)) {
        std::string name = n->name;
        listed.insert_or_assign(std::move(name), std::move(*n));
      }
    }
    version = resource_version(body);
    return true;
  }

  bool apply(std::string_view type, const Json& object) override {
    std::optional<ClusterNode> node = parse_node(object);
    if (!node) return false;  // no name: not one the cache could hold
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = nodes.find(node->name);
    if (type == "DELETED") {
      if (it == nodes.end()) return false;
      nodes.erase(it);
    } else if (it != nodes.end() && same_node(it->second, *node)) {
      return false;  // a status update: nothing GPU009 reads changed
    } else {
      std::string name = node->name;
      nodes.insert_or_assign(std::move(name), std::move(*node));
    }
    return true;
  }
};

}  // namespace

struct NodeWatch::Impl {
  explicit Impl(const NodeWatchConfig& config)
      : cache(config.page_size), reflector(kNodesPath, config, cache) {}
  NodeCache cache;
  Reflector reflector;  // after the cache: stopped before the cache goes
};

NodeWatch::NodeWatch(NodeWatchConfig config) : impl_(std::make_unique<Impl>(config)) {}

NodeWatch::~NodeWatch() = default;

std::optional<ClusterNode> NodeWatch::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->cache.mutex);
  const auto it = impl_->cache.nodes.find(name);
  if (it == impl_->cache.nodes.end()) return std::nullopt;
  return it->second;
}

bool NodeWatch::synced() const { return impl_->cache.synced.load(); }

NodeWatchCounts NodeWatch::counts() const {
  std::size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->cache.mutex);
    size = impl_->cache.nodes.size();
  }
  const ReflectorCounts r = impl_->reflector.counts();
  return {r.lists, r.events, r.errors, size};
}

void NodeWatch::render_metrics(std::string& out) const {
  const NodeWatchCounts c = counts();
  auto metric = [&out](const char* name, const char* type, const char* help, std::uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + std::to_string(v) + "\n";
  };
  metric("gpuadmit_nodes_synced", "gauge",
         "1 once the cluster's Nodes have been listed (the webhook is ready then).",
         synced() ? 1 : 0);
  metric("gpuadmit_nodes", "gauge", "Nodes the watch holds (name, labels, taints).", c.nodes);
  metric("gpuadmit_node_watch_lists_total", "counter", "Successful lists of the cluster's Nodes.",
         c.lists);
  metric("gpuadmit_node_watch_events_total", "counter",
         "Node watch events that changed what the cache holds (added, labels or taints "
         "changed, deleted).",
         c.events);
  metric("gpuadmit_node_watch_errors_total", "counter",
         "Failed Node lists and watches (each is logged).", c.errors);
}

}  // namespace gpuadmit::kube
