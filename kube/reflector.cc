#include "kube/reflector.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/json_parse.h"

namespace gpuadmit::kube {

std::string resource_version(const Json& object) {
  if (const Json* metadata = find_member(object, "metadata")) {
    return std::string(string_member(*metadata, "resourceVersion"));
  }
  return {};
}

struct Reflector::Impl {
  Impl(std::string p, ReflectorConfig c, ReflectorCache& store)
      : path(std::move(p)),
        config(std::move(c)),
        cache(store),
        api(config.access.endpoint(config.timeout)) {
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

  const std::string path;
  const ReflectorConfig config;
  ReflectorCache& cache;
  ApiClient api;
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

  void changed() {
    cache.publish();
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

  // The service account token, read again for every request: the kubelet rotates it.
  std::optional<std::string> token() {
    std::optional<std::string> t = read_token(config.access.token_path);
    if (!t) fail("cannot read the service account token " + config.access.token_path);
    return t;
  }

  bool list() {
    const std::optional<std::string> t = token();
    if (!t) return false;
    if (std::string error = cache.list(api, *t, version); !error.empty()) {
      fail(error);
      return false;
    }
    lists.fetch_add(1, std::memory_order_relaxed);
    changed();
    return true;
  }

  // One watch request. True: it ended normally (its timeoutSeconds), watch again from `version`;
  // false: list again.
  bool watch() {
    const std::optional<std::string> t = token();
    if (!t) return false;
    const std::string request =
        path + "?watch=true&resourceVersion=" + version +
        "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(config.watch_timeout.count());
    pending.clear();
    bool relist = false;
    const ApiResponse r = api.stream(request, *t, config.watch_timeout + config.timeout,
                                     [&](std::string_view data) { return take(data, relist); });
    if (stopped()) return false;
    if (relist) return false;  // 410: the version is gone (told already)
    if (r.status == 410) return false;
    if (r.status != 200) {
      fail("watch " + path + ": " + (r.status == 0 ? r.error : describe_answer(r)));
      return false;
    }
    return true;
  }

  // Watch events, one JSON object a line (apimachinery's watch stream over HTTP/1.1).
  bool take(std::string_view data, bool& relist) {
    pending.append(data);
    bool any = false;
    std::size_t start = 0;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      Json event;
      if (!parse_json(std::string_view(pending).substr(start, end - start), event) ||
          !apply(event, any)) {
        if (!event.is_object()) fail("a watch event that is not JSON");
        relist = true;
        break;
      }
    }
    pending.erase(0, start);
    if (any) changed();
    return !relist && !stopped();
  }

  // False: the watch cannot go on (an ERROR event, or one that is not an event).
  bool apply(const Json& event, bool& any) {
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
    if (cache.apply(type, *object)) {
      events.fetch_add(1, std::memory_order_relaxed);
      any = true;
    }
    return true;
  }
};

Reflector::Reflector(std::string path, ReflectorConfig config, ReflectorCache& cache)
    : impl_(std::make_unique<Impl>(std::move(path), std::move(config), cache)) {}

Reflector::~Reflector() = default;

ReflectorCounts Reflector::counts() const {
  return {impl_->lists.load(), impl_->events.load(), impl_->errors.load()};
}

}  // namespace gpuadmit::kube
