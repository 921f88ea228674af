#include "kube/priority_class_watch.h"

#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/shared_slot.h"
#include "kube/api_client.h"

namespace gpuadmit::kube {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kListPath = "/apis/scheduling.k8s.io/v1/priorityclasses";

// What lookups read: replaced whole on every change, never modified.
struct Snapshot {
  std::map<std::string, ClusterPriorityClass, std::less<>> classes;
  std::optional<ClusterPriorityClass> global;
  std::uint64_t version = 0;
  bool synced = false;
};

std::string resource_version(const Json& object) {
  if (const Json* metadata = find_member(object, "metadata")) {
    return std::string(string_member(*metadata, "resourceVersion"));
  }
  return {};
}

}  // namespace

std::optional<ClusterPriorityClass> parse_priority_class(const Json& object) {
  const Json* metadata = find_member(object, "metadata");
  const Json* value = find_member(object, "value");
  if (metadata == nullptr || value == nullptr || !value->is_number_integer()) return std::nullopt;
  const std::int64_t v = value->get<std::int64_t>();
  if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
    return std::nullopt;
  ClusterPriorityClass c;
  c.name = std::string(string_member(*metadata, "name"));
  if (c.name.empty()) return std::nullopt;
  c.value = static_cast<std::int32_t>(v);
  if (const Json* g = find_member(object, "globalDefault"); g != nullptr && g->is_boolean()) {
    c.global_default = g->get<bool>();
  }
  if (const std::string_view p = string_member(object, "preemptionPolicy"); !p.empty()) {
    c.preemption_policy = std::string(p);
  }
  return c;
}

struct PriorityClassWatch::Impl {
  explicit Impl(PriorityClassWatchConfig c)
      : config(std::move(c)), api(config.access.endpoint(config.timeout)) {
    snapshot.store(std::make_shared<const Snapshot>());
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

  PriorityClassWatchConfig config;
  ApiClient api;
  SharedSlot<const Snapshot> snapshot;
  std::atomic<std::uint64_t> lists{0}, events{0}, errors{0};
  std::mutex mutex;  // stopping, and the pause between attempts
  std::condition_variable wake;
  bool stopping = false;
  std::thread thread;

  // The watch's own state, on its thread only.
  std::map<std::string, ClusterPriorityClass, std::less<>> classes;
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

  void publish() {
    auto next = std::make_shared<Snapshot>();
    next->classes = classes;
    std::vector<ClusterPriorityClass> all;
    for (const auto& [name, c] : classes) all.push_back(c);
    next->global = lowest_global_default(all);
    next->version = snapshot.load()->version + 1;
    next->synced = true;
    snapshot.store(std::move(next));
    if (config.on_change) config.on_change();
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

  bool list() {
    const std::optional<std::string> token = read_token(config.access.token_path);
    if (!token) {
      fail("cannot read the service account token " + config.access.token_path);
      return false;
    }
    const ApiResponse r = api.get(kListPath, *token);
    if (r.status == 0) {
      fail("GET " + std::string(kListPath) + ": " + r.error);
      return false;
    }
    if (r.status != 200) {
      fail(describe_answer(r) + " for GET " + kListPath);
      return false;
    }
    const Json list = Json::parse(r.body, nullptr, false);
    const Json* items = find_member(list, "items");
    if (string_member(list, "kind") != "PriorityClassList" || items == nullptr ||
        !items->is_array()) {
      fail("the API server's answer to GET " + std::string(kListPath) +
           " is not a PriorityClassList");
      return false;
    }
    classes.clear();
    for (const Json& item : *items) {
      if (std::optional<ClusterPriorityClass> c = parse_priority_class(item)) {
        classes[c->name] = std::move(*c);
      }
    }
    version = resource_version(list);
    lists.fetch_add(1, std::memory_order_relaxed);
    publish();
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
        std::string(kListPath) + "?watch=true&resourceVersion=" + version +
        "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(config.watch_timeout.count());
    pending.clear();
    bool relist = false;
    const ApiResponse r = api.stream(path, *token, config.watch_timeout + config.timeout,
                                     [&](std::string_view data) { return take(data, relist); });
    if (stopped()) return false;
    if (relist) return false;  // 410: the version is gone (told already)
    if (r.status == 410) return false;
    if (r.status == 0 || r.status != 200) {
      fail("watch " + std::string(kListPath) + ": " +
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
      const Json event = Json::parse(pending.substr(start, end - start), nullptr, false);
      if (!apply(event, changed)) {
        relist = true;
        break;
      }
    }
    pending.erase(0, start);
    if (changed) publish();
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
    if (const std::string v = resource_version(*object); !v.empty()) version = v;
    if (type == "BOOKMARK") return true;
    const std::optional<ClusterPriorityClass> c = parse_priority_class(*object);
    if (!c) return true;  // not one the cache could hold (validation makes this impossible)
    events.fetch_add(1, std::memory_order_relaxed);
    if (type == "DELETED") {
      changed |= classes.erase(c->name) > 0;
    } else {
      classes[c->name] = *c;
      changed = true;
    }
    return true;
  }
};

PriorityClassWatch::PriorityClassWatch(PriorityClassWatchConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

PriorityClassWatch::~PriorityClassWatch() = default;

std::optional<ClusterPriorityClass> PriorityClassWatch::find(std::string_view name) const {
  const std::shared_ptr<const Snapshot> s = impl_->snapshot.load();
  const auto it = s->classes.find(name);
  if (it == s->classes.end()) return std::nullopt;
  return it->second;
}

std::optional<ClusterPriorityClass> PriorityClassWatch::global_default() const {
  return impl_->snapshot.load()->global;
}

bool PriorityClassWatch::synced() const { return impl_->snapshot.load()->synced; }

std::uint64_t PriorityClassWatch::version() const { return impl_->snapshot.load()->version; }

PriorityClassWatchCounts PriorityClassWatch::counts() const {
  return {impl_->lists.load(), impl_->events.load(), impl_->errors.load(),
          impl_->snapshot.load()->classes.size()};
}

void PriorityClassWatch::render_metrics(std::string& out) const {
  const PriorityClassWatchCounts c = counts();
  auto metric = [&out](const char* name, const char* type, const char* help, std::uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + std::to_string(v) + "\n";
  };
  metric("gpuadmit_priority_classes_synced", "gauge",
         "1 once the cluster's PriorityClasses have been listed (the webhook is ready then).",
         synced() ? 1 : 0);
  metric("gpuadmit_priority_classes", "gauge", "PriorityClasses the watch holds.", c.classes);
  metric("gpuadmit_priority_class_watch_lists_total", "counter",
         "Successful lists of the cluster's PriorityClasses.", c.lists);
  metric("gpuadmit_priority_class_watch_events_total", "counter",
         "PriorityClass watch events applied (added, modified, deleted).", c.events);
  metric("gpuadmit_priority_class_watch_errors_total", "counter",
         "Failed PriorityClass lists and watches (each is logged).", c.errors);
}

}  // namespace gpuadmit::kube
