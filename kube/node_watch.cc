#include "kube/node_watch.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "engine/json_parse.h"
#include "kube/api_client.h"
#include "kube/list.h"

namespace gpuadmit::kube {
namespace {

constexpr const char* kNodesPath = "/api/v1/nodes";

// Names unique across kube/'s .cc files (a unity build puts them in one translation unit).
using NodeMap = std::map<std::string, ClusterNode, std::less<>>;

std::string node_object_version(const Json& object) {
  if (const Json* metadata = find_member(object, "metadata")) {
    return std::string(string_member(*metadata, "resourceVersion"));
  }
  return {};
}

bool same_node(const ClusterNode& a, const ClusterNode& b) {
  if (a.labels != b.labels || a.taints.size() != b.taints.size()) return false;
  for (size_t i = 0; i < a.taints.size(); ++i) {
    const Taint &x = a.taints[i], &y = b.taints[i];
    if (x.key != y.key || x.value != y.value || x.effect != y.effect) return false;
  }
  return true;
}

}  // namespace

struct NodeWatch::Impl {
  explicit Impl(NodeWatchConfig c)
      : config(std::move(c)), api(config.access.endpoint(config.timeout)) {
    thread = std::thread([this] { run(); });
  }
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    api.cancel_stream();
    thread.join();
  }

  NodeWatchConfig config;
  ApiClient api;
  // The cache: looked up by reviews, written by the watch's thread. A lookup copies one entry
  // under the lock; a change touches one entry, a list swaps the whole map.
  mutable std::mutex cache_mutex;
  NodeMap nodes;
  std::atomic<bool> synced{false};
  std::atomic<std::uint64_t> lists{0}, events{0}, errors{0};
  std::mutex mutex;  // stopping, and the pause between attempts
  std::condition_variable wake;
  bool stopping = false;
  std::thread thread;

  // The watch's own state, on its thread only.
  std::string version;  // the resourceVersion to watch from
  std::string pending;  // the part of an event line not received yet

  bool stopped() {
    std::lock_guard<std::mutex> lock(mutex);
    return stopping;
  }

  void fail(const std::string& error) {
    errors.fetch_add(1, std::memory_order_relaxed);
    if (config.on_error) config.on_error(error);
  }

  // List, then watch from the list's version until the watch must start over from a list.
  void run() {
    std::chrono::milliseconds pause = config.retry_min;
    while (!stopped()) {
      if (list()) {
        pause = config.retry_min;
        while (!stopped() && watch()) {
        }
      }
      if (stopped()) break;
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait_for(lock, pause, [this] { return stopping; });
      pause = std::min(pause * 2, config.retry_max);
    }
  }

  // Every page, into a new map that replaces the cache once the last page is in: a list that
  // fails half way leaves the last complete one answering.
  bool list() {
    const std::optional<std::string> token = read_token(config.access.token_path);
    if (!token) {
      fail("cannot read the service account token " + config.access.token_path);
      return false;
    }
    NodeMap listed;
    std::string listed_version;
    std::string page_error;
    const ListResult r =
        list_all(api, *token, kNodesPath, {.field_selector = "", .limit = config.page_size},
                 [&](const std::string& page) {
                   Json body;
                   const Json* items = nullptr;
                   if (parse_json(page, body) && string_member(body, "kind") == "NodeList") {
                     items = find_member(body, "items");
                   }
                   if (items == nullptr || !items->is_array()) {
                     page_error = "the API server's answer to GET " + std::string(kNodesPath) +
                                  " is not a NodeList";
                     return false;
                   }
                   for (const Json& item : *items) {
                     if (std::optional<ClusterNode> n = parse_node(item)) {
                       std::string name = n->name;
                       listed.insert_or_assign(std::move(name), std::move(*n));
                     }
                   }
                   listed_version = node_object_version(body);
                   return true;
                 });
    if (!r.ok() || !page_error.empty()) {
      fail(!page_error.empty() ? page_error : r.error);
      return false;
    }
    version = listed_version;
    {
      std::lock_guard<std::mutex> lock(cache_mutex);
      nodes.swap(listed);
    }
    synced.store(true);
    lists.fetch_add(1, std::memory_order_relaxed);
    if (config.on_change) config.on_change();
    return true;
  }

  // One watch request. True: it ended normally (its timeoutSeconds), watch again from `version`;
  // false: list again.
  bool watch() {
    const std::optional<std::string> token = read_token(config.access.token_path);
    if (!token) {
      fail("cannot read the service account token " + config.access.token_path);
      return false;
    }
    const std::string path =
        std::string(kNodesPath) + "?watch=true&resourceVersion=" + version +
        "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(config.watch_timeout.count());
    pending.clear();
    bool relist = false;
    const ApiResponse r = api.stream(path, *token, config.watch_timeout + config.timeout,
                                     [&](std::string_view data) { return take(data, relist); });
    if (stopped()) return false;
    if (relist) return false;  // 410: the version is gone (told already)
    if (r.status == 410) return false;
    if (r.status != 200) {
      fail("watch " + std::string(kNodesPath) + ": " +
           (r.status == 0 ? r.error : describe_answer(r)));
      return false;
    }
    return true;
  }

  // Watch events, one JSON object a line (apimachinery's watch stream over HTTP/1.1).
  bool take(std::string_view data, bool& relist) {
    pending.append(data);
    bool changed = false;
    std::size_t start = 0;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      Json event;
      if (!parse_json(std::string_view(pending).substr(start, end - start), event) ||
          !apply(event, changed)) {
        if (!event.is_object()) fail("a watch event that is not JSON");
        relist = true;
        break;
      }
    }
    pending.erase(0, start);
    if (changed && config.on_change) config.on_change();
    return !relist && !stopped();
  }

  // False: the watch cannot go on (an ERROR event, or one that is not an event).
  bool apply(const Json& event, bool& changed) {
    const std::string_view type = string_member(event, "type");
    const Json* object = find_member(event, "object");
    if (object == nullptr || type.empty()) {
      fail("a watch event that is not one");
      return false;
    }
    if (type == "ERROR") {
      // A metav1.Status; 410 Gone / Expired: the version was compacted away, list again.
      if (const Json* code = find_member(*object, "code");
          code == nullptr || !code->is_number() || code->get<int>() != 410) {
        fail("watch ERROR: " + std::string(string_member(*object, "message")));
      }
      return false;
    }
    if (const std::string v = node_object_version(*object); !v.empty()) version = v;
    if (type == "BOOKMARK") return true;
    std::optional<ClusterNode> node = parse_node(*object);
    if (!node) return true;  // no name: not one the cache could hold
    std::lock_guard<std::mutex> lock(cache_mutex);
    const auto it = nodes.find(node->name);
    if (type == "DELETED") {
      if (it == nodes.end()) return true;
      nodes.erase(it);
    } else if (it != nodes.end() && same_node(it->second, *node)) {
      return true;  // a status update: nothing GPU009 reads changed
    } else {
      std::string name = node->name;
      nodes.insert_or_assign(std::move(name), std::move(*node));
    }
    events.fetch_add(1, std::memory_order_relaxed);
    changed = true;
    return true;
  }
};

NodeWatch::NodeWatch(NodeWatchConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

NodeWatch::~NodeWatch() = default;

std::optional<ClusterNode> NodeWatch::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->cache_mutex);
  const auto it = impl_->nodes.find(name);
  if (it == impl_->nodes.end()) return std::nullopt;
  return it->second;
}

bool NodeWatch::synced() const { return impl_->synced.load(); }

NodeWatchCounts NodeWatch::counts() const {
  std::size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->cache_mutex);
    size = impl_->nodes.size();
  }
  return {impl_->lists.load(), impl_->events.load(), impl_->errors.load(), size};
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
