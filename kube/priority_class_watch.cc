#include "kube/priority_class_watch.h"

#include <limits>
#include <map>
#include <vector>

#include "engine/shared_slot.h"
#include "kube/reflector.h"

namespace gpuadmit::kube {
namespace {

constexpr const char* kListPath = "/apis/scheduling.k8s.io/v1/priorityclasses";

// What lookups read: replaced whole on every change, never modified.
struct Snapshot {
  std::map<std::string, ClusterPriorityClass, std::less<>> classes;
  std::optional<ClusterPriorityClass> global;
  std::uint64_t version = 0;
  bool synced = false;
};

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

namespace {

// Keeps the classes on the reflector's thread; publishes a snapshot lookups read.
struct PriorityClassCache final : ReflectorCache {
  SharedSlot<const Snapshot> snapshot;
  std::map<std::string, ClusterPriorityClass, std::less<>> classes;

  PriorityClassCache() { snapshot.store(std::make_shared<const Snapshot>()); }

  std::string list(const ApiClient& api, const std::string& token, std::string& version) override {
    const ApiResponse r = api.get(kListPath, token);
    if (r.status == 0) return "GET " + std::string(kListPath) + ": " + r.error;
    if (r.status != 200) return describe_answer(r) + " for GET " + kListPath;
    const Json list = Json::parse(r.body, nullptr, false);
    const Json* items = find_member(list, "items");
    if (string_member(list, "kind") != "PriorityClassList" || items == nullptr ||
        !items->is_array()) {
      return "the API server's answer to GET " + std::string(kListPath) +
             " is not a PriorityClassList";
    }
    classes.clear();
    for (const Json& item : *items) {
      if (std::optional<ClusterPriorityClass> c = parse_priority_class(item)) {
        classes[c->name] = std::move(*c);
      }
    }
    version = resource_version(list);
    return {};
  }

  bool apply(std::string_view type, const Json& object) override {
    const std::optional<ClusterPriorityClass> c = parse_priority_class(object);
    if (!c) return false;  // not one the cache could hold (validation makes this impossible)
    if (type == "DELETED") return classes.erase(c->name) > 0;
    classes[c->name] = *c;
    return true;
  }

  void publish() override {
    auto next = std::make_shared<Snapshot>();
    next->classes = classes;
    std::vector<ClusterPriorityClass> all;
    for (const auto& [name, c] : classes) all.push_back(c);
    next->global = lowest_global_default(all);
    next->version = snapshot.load()->version + 1;
    next->synced = true;
    snapshot.store(std::move(next));
  }
};

}  // namespace

struct PriorityClassWatch::Impl {
  explicit Impl(const PriorityClassWatchConfig& config) : reflector(kListPath, config, cache) {}
  PriorityClassCache cache;
  Reflector reflector;  // after the cache: stopped before the cache goes
};

PriorityClassWatch::PriorityClassWatch(PriorityClassWatchConfig config)
    : impl_(std::make_unique<Impl>(config)) {}

PriorityClassWatch::~PriorityClassWatch() = default;

std::optional<ClusterPriorityClass> PriorityClassWatch::find(std::string_view name) const {
  const std::shared_ptr<const Snapshot> s = impl_->cache.snapshot.load();
  const auto it = s->classes.find(name);
  if (it == s->classes.end()) return std::nullopt;
  return it->second;
}

std::optional<ClusterPriorityClass> PriorityClassWatch::global_default() const {
  return impl_->cache.snapshot.load()->global;
}

bool PriorityClassWatch::synced() const { return impl_->cache.snapshot.load()->synced; }

std::uint64_t PriorityClassWatch::version() const { return impl_->cache.snapshot.load()->version; }

PriorityClassWatchCounts PriorityClassWatch::counts() const {
  const ReflectorCounts r = impl_->reflector.counts();
  return {r.lists, r.events, r.errors, impl_->cache.snapshot.load()->classes.size()};
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
         "PriorityClass watch events that changed the cache (added, modified, deleted).", c.events);
  metric("gpuadmit_priority_class_watch_errors_total", "counter",
         "Failed PriorityClass lists and watches (each is logged).", c.errors);
}

}  // namespace gpuadmit::kube
