#include "kube/kube_claim_resolver.h"

#include <algorithm>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "engine/dra.h"
#include "kube/api_client.h"
#include "kube/in_cluster.h"
#include "kube/list.h"

namespace gpuadmit::kube {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kGroup = "resource.k8s.io";
// Served versions in order of preference: v1 (GA in 1.34), then the betas older clusters serve
// (v1beta2 since 1.33, v1beta1 since 1.32). A ResourceClaimSpec of any of them is understood by
// the engine; `ResolvedClaim::api_version` says which it got.
constexpr const char* kVersions[] = {"v1", "v1beta2", "v1beta1"};

const char* resource_of(ClaimKind kind) {
  return kind == ClaimKind::kTemplate ? "resourceclaimtemplates" : "resourceclaims";
}
const char* kind_of(ClaimKind kind) {
  return kind == ClaimKind::kTemplate ? "ResourceClaimTemplate" : "ResourceClaim";
}

// Object names are DNS subdomains and namespaces DNS labels (apimachinery validation): lower-case
// alphanumerics, '-' and '.'. Checked so that no name can change the request path.
bool valid_name(std::string_view name, std::size_t max) {
  if (name.empty() || name.size() > max) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

ResolvedClaim result(ClaimLookup status, std::string error) {
  ResolvedClaim r;
  r.status = status;
  r.error = std::move(error);
  return r;
}

// The cache's key of a claim or template: "c/<ns>/<name>" or "t/<ns>/<name>".
std::string cache_key(ClaimKind kind, std::string_view ns, std::string_view name) {
  std::string key = std::string(kind == ClaimKind::kTemplate ? "t/" : "c/");
  key.append(ns).append("/").append(name);
  return key;
}

bool is_not_found_status(const std::string& body) {
  const Json status = Json::parse(body, nullptr, false);
  return string_member(status, "kind") == "Status" && string_member(status, "reason") == "NotFound";
}

}  // namespace

std::variant<KubeClaimResolverConfig, std::string> KubeClaimResolverConfig::in_cluster() {
  auto access = InClusterAccess::from_environment();
  if (auto* error = std::get_if<std::string>(&access)) return *error;
  const InClusterAccess& a = std::get<InClusterAccess>(access);
  KubeClaimResolverConfig config;
  config.host = a.host;
  config.port = a.port;
  config.token_path = a.token_path;
  config.ca_path = a.ca_path;
  return config;
}

struct KubeClaimResolver::Impl {
  explicit Impl(KubeClaimResolverConfig c)
      : config(std::move(c)), api({config.host, config.port, config.ca_path, config.timeout}) {}

  struct Entry {
    std::string key;
    ResolvedClaim claim;
    Clock::time_point expires;
  };

  KubeClaimResolverConfig config;
  ApiClient api;

  mutable std::mutex mutex;  // guards the cache and the discovered version
  std::list<Entry> lru;      // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index;
  std::optional<std::string> version;  // discovered once, forgotten if it stops being served

  std::atomic<std::uint64_t> found{0}, not_found{0}, unavailable{0}, cache_hit{0}, deadline{0};

  Clock::time_point now() const { return config.now ? config.now() : Clock::now(); }

  std::optional<ResolvedClaim> cached(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = index.find(key);
    if (it == index.end()) return std::nullopt;
    if (it->second->expires <= now()) {
      lru.erase(it->second);
      index.erase(it);
      return std::nullopt;
    }
    lru.splice(lru.begin(), lru, it->second);
    return it->second->claim;
  }

  void forget(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = index.find(key); it != index.end()) {
      lru.erase(it->second);
      index.erase(it);
    }
  }

  void remember(const std::string& key, const ResolvedClaim& claim) {
    const std::chrono::milliseconds ttl = claim.status == ClaimLookup::kFound ? config.found_ttl
                                          : claim.status == ClaimLookup::kNotFound
                                              ? config.not_found_ttl
                                              : config.unavailable_ttl;
    if (config.cache_size == 0 || ttl.count() <= 0) return;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = index.find(key); it != index.end()) {
      lru.erase(it->second);
      index.erase(it);
    }
    lru.push_front(Entry{key, claim, now() + ttl});
    index[key] = lru.begin();
    while (lru.size() > config.cache_size) {
      index.erase(lru.back().key);
      lru.pop_back();
    }
  }

  // The served version of resource.k8s.io, from the group's discovery document
  // (GET /apis/resource.k8s.io → APIGroup{versions[].version}); nullopt and `error` when it
  // cannot be known. Only a successful discovery is kept.
  std::optional<std::string> served_version(const std::string& token, Clock::time_point deadline,
                                            std::string& error) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (version) return version;
    }
    const std::chrono::milliseconds left = time_left(deadline);
    if (left.count() == 0) {
      error = deadline_passed().error;
      return std::nullopt;
    }
    const ApiResponse r = api.get(std::string("/apis/") + kGroup, token, left);
    if (r.status == 0) {
      error = r.error;
      return std::nullopt;
    }
    if (r.status == 404) {
      error = std::string("the API server does not serve ") + kGroup + " (DRA is not enabled)";
      return std::nullopt;
    }
    if (r.status != 200) {
      error = describe_answer(r) + " for GET /apis/" + kGroup;
      return std::nullopt;
    }
    const Json group = Json::parse(r.body, nullptr, false);
    const Json* versions = find_member(group, "versions");
    for (const char* wanted : kVersions) {
      if (versions == nullptr || !versions->is_array()) break;
      for (const Json& v : *versions) {
        if (string_member(v, "version") != wanted) continue;
        std::lock_guard<std::mutex> lock(mutex);
        version = wanted;
        return version;
      }
    }
    error = std::string("the API server serves none of ") + kGroup + " v1, v1beta2, v1beta1";
    return std::nullopt;
  }

  void forget_version(const std::string& stale) {
    std::lock_guard<std::mutex> lock(mutex);
    if (version == stale) version.reset();
  }

  // What is left of `deadline` for the next request, at most the per-request timeout; 0 when
  // nothing is left.
  std::chrono::milliseconds time_left(Clock::time_point deadline) const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now());
    if (left.count() <= 0) return std::chrono::milliseconds(0);
    return std::min(left, config.timeout);
  }

  ResolvedClaim deadline_passed() const {
    return result(ClaimLookup::kUnavailable, "the lookups of this review took their " +
                                                 std::to_string(config.review_deadline.count()) +
                                                 " ms (--dra-lookup-deadline): not looked up");
  }

  // nullopt: the deadline passed before the object could be asked for.
  std::optional<ResolvedClaim> fetch(ClaimKind kind, std::string_view ns, std::string_view name,
                                     Clock::time_point deadline) {
    const std::optional<std::string> token = read_token(config.token_path);
    if (!token) {
      return result(ClaimLookup::kUnavailable,
                    "cannot read the service account token " + config.token_path);
    }
    std::string error;
    const std::optional<std::string> v = served_version(*token, deadline, error);
    if (!v && time_left(deadline).count() == 0) return std::nullopt;
    if (!v) return result(ClaimLookup::kUnavailable, error);
    const std::string path = std::string("/apis/") + kGroup + "/" + *v + "/namespaces/" +
                             std::string(ns) + "/" + resource_of(kind) + "/" + std::string(name);
    const std::chrono::milliseconds left = time_left(deadline);
    if (left.count() == 0) return std::nullopt;
    const ApiResponse r = api.get(path, *token, left);
    // Cut short by the deadline rather than failed: not remembered as unavailable.
    if (r.status == 0 && left < config.timeout && time_left(deadline).count() == 0) {
      return std::nullopt;
    }
    if (r.status == 0) return result(ClaimLookup::kUnavailable, r.error);
    if (r.status == 404) {
      // The object's 404 is a Status with reason NotFound; a 404 without one is the server not
      // serving this group version any more (an upgrade or rollback): discover it again.
      if (is_not_found_status(r.body)) {
        return result(ClaimLookup::kNotFound, std::string(kind_of(kind)) + " " + std::string(ns) +
                                                  "/" + std::string(name) + " does not exist");
      }
      forget_version(*v);
      return result(ClaimLookup::kUnavailable,
                    std::string(kGroup) + "/" + *v + " is no longer served");
    }
    if (r.status != 200) return result(ClaimLookup::kUnavailable, describe_answer(r));
    return parse_object(kind, r.body);
  }

  static ResolvedClaim parse_object(ClaimKind kind, const std::string& body) {
    Json object = Json::parse(body, nullptr, false);
    if (!object.is_object() || string_member(object, "kind") != kind_of(kind)) {
      return result(ClaimLookup::kUnavailable,
                    std::string("the API server's answer is not a ") + kind_of(kind));
    }
    // ResourceClaim: spec is the ResourceClaimSpec. ResourceClaimTemplate: spec is a
    // ResourceClaimTemplateSpec {metadata, spec}, the claim's spec one level down.
    Json* spec = find_member(object, "spec");
    if (spec != nullptr && kind == ClaimKind::kTemplate) spec = find_member(*spec, "spec");
    if (spec != nullptr && !spec->is_object()) {
      return result(ClaimLookup::kUnavailable,
                    std::string("the API server's ") + kind_of(kind) + " has a malformed spec");
    }
    ResolvedClaim r;
    r.status = ClaimLookup::kFound;
    r.api_version = std::string(string_member(object, "apiVersion"));
    r.spec = spec != nullptr ? std::move(*spec) : Json::object();
    return r;
  }
};

KubeClaimResolver::KubeClaimResolver(KubeClaimResolverConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

KubeClaimResolver::~KubeClaimResolver() = default;

namespace {

// One review's view of the resolver: every lookup within the same deadline.
class ReviewLookups final : public ClaimResolver {
 public:
  ReviewLookups(const KubeClaimResolver& resolver, Clock::time_point deadline)
      : resolver_(resolver), deadline_(deadline) {}
  ResolvedClaim resolve(ClaimKind kind, std::string_view ns, std::string_view name) const override {
    return resolver_.resolve_until(kind, ns, name, deadline_);
  }
  PendingPods pending_pods_naming(ClaimKind kind, std::string_view ns,
                                  std::string_view name) const override {
    return resolver_.pending_pods_naming_until(kind, ns, name, deadline_);
  }

 private:
  const KubeClaimResolver& resolver_;
  const Clock::time_point deadline_;
};

}  // namespace

ResolvedClaim KubeClaimResolver::resolve(ClaimKind kind, std::string_view ns,
                                         std::string_view name) const {
  return resolve_until(kind, ns, name, impl_->now() + impl_->config.review_deadline);
}

std::unique_ptr<const ClaimResolver> KubeClaimResolver::for_review() const {
  return std::make_unique<ReviewLookups>(*this, impl_->now() + impl_->config.review_deadline);
}

ResolvedClaim KubeClaimResolver::resolve_until(ClaimKind kind, std::string_view ns,
                                               std::string_view name,
                                               Clock::time_point deadline) const {
  try {
    if (!valid_name(ns, 63) || !valid_name(name, 253)) {
      return result(ClaimLookup::kNotFound, std::string(kind_of(kind)) + " name \"" +
                                                std::string(name) + "\" in namespace \"" +
                                                std::string(ns) + "\" is not a valid name");
    }
    const std::string key = cache_key(kind, ns, name);
    if (std::optional<ResolvedClaim> hit = impl_->cached(key)) {
      impl_->cache_hit.fetch_add(1, std::memory_order_relaxed);
      return *hit;
    }
    // Past the review's deadline nothing is asked, and nothing is remembered: the next review
    // has time of its own for this name.
    if (impl_->time_left(deadline).count() == 0) {
      impl_->deadline.fetch_add(1, std::memory_order_relaxed);
      return impl_->deadline_passed();
    }
    std::optional<ResolvedClaim> fetched = impl_->fetch(kind, ns, name, deadline);
    if (!fetched) {
      impl_->deadline.fetch_add(1, std::memory_order_relaxed);
      return impl_->deadline_passed();
    }
    ResolvedClaim& claim = *fetched;
    (claim.status == ClaimLookup::kFound      ? impl_->found
     : claim.status == ClaimLookup::kNotFound ? impl_->not_found
                                              : impl_->unavailable)
        .fetch_add(1, std::memory_order_relaxed);
    impl_->remember(key, claim);
    return claim;
  } catch (const std::exception& e) {  // bad_alloc; nothing else throws here
    impl_->unavailable.fetch_add(1, std::memory_order_relaxed);
    return result(ClaimLookup::kUnavailable, std::string("lookup failed: ") + e.what());
  }
}

PendingPods KubeClaimResolver::pending_pods_naming(ClaimKind kind, std::string_view ns,
                                                   std::string_view name) const {
  return pending_pods_naming_until(kind, ns, name, impl_->now() + impl_->config.review_deadline);
}

namespace {

PendingPods pods_unavailable(std::string error) {
  PendingPods p;
  p.status = PendingPodsLookup::kUnavailable;
  p.error = std::move(error);
  return p;
}

}  // namespace

PendingPods KubeClaimResolver::pending_pods_naming_until(ClaimKind kind, std::string_view ns,
                                                         std::string_view name,
                                                         Clock::time_point deadline) const {
  try {
    if (!valid_name(ns, 63) || !valid_name(name, 253)) return {PendingPodsLookup::kListed, {}, {}};
    // A claim or template of this name is being created: whatever was cached under the name is
    // of an object deleted since (their specs are immutable otherwise), so forget it.
    impl_->forget(cache_key(kind, ns, name));
    const std::optional<std::string> token = read_token(impl_->config.token_path);
    if (!token) return pods_unavailable("cannot read the service account token");
    PendingPods found;
    found.status = PendingPodsLookup::kListed;
    bool late = false;
    // Unscheduled Pods only: the API server filters them from its watch cache
    // (fieldSelector spec.nodeName=, a field every Pod list supports).
    const ListResult r = list_all(
        impl_->api, *token, "/api/v1/namespaces/" + std::string(ns) + "/pods",
        {.field_selector = "spec.nodeName=", .label_selector = "", .limit = 500},
        [&](const std::string& page) {
          if (impl_->time_left(deadline).count() == 0) return !(late = true);
          const Json list = Json::parse(page, nullptr, false);
          const Json* items = find_member(list, "items");
          if (items == nullptr || !items->is_array()) return false;
          for (const Json& pod : *items) {
            if (!pod_waits_for_claim(pod, kind, name)) continue;
            const Json* metadata = find_member(pod, "metadata");
            const std::string pod_name(string_member(*metadata, "name"));
            // A restarted list (an expired continue token) sends some Pods twice.
            if (std::find(found.names.begin(), found.names.end(), pod_name) == found.names.end()) {
              found.names.push_back(pod_name);
            }
          }
          return true;
        });
    if (late) return pods_unavailable(impl_->deadline_passed().error);
    if (!r.ok()) return pods_unavailable("listing Pods: " + r.error);
    return found;
  } catch (const std::exception& e) {  // bad_alloc; nothing else throws here
    return pods_unavailable(std::string("listing Pods failed: ") + e.what());
  }
}

ClaimLookupCounts KubeClaimResolver::counts() const {
  return {impl_->found.load(), impl_->not_found.load(), impl_->unavailable.load(),
          impl_->cache_hit.load(), impl_->deadline.load()};
}

std::size_t KubeClaimResolver::cache_entries() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->lru.size();
}

void KubeClaimResolver::render_metrics(std::string& out) const {
  const ClaimLookupCounts c = counts();
  out +=
      "# HELP gpuadmit_dra_lookups_total DRA claim lookups through the Kubernetes API by result: "
      "found, not_found, unavailable (the API's answers), cache_hit (answered from the cache) "
      "and deadline (not made: the review's lookup deadline had passed).\n"
      "# TYPE gpuadmit_dra_lookups_total counter\n";
  const std::pair<const char*, std::uint64_t> series[] = {{"found", c.found},
                                                          {"not_found", c.not_found},
                                                          {"unavailable", c.unavailable},
                                                          {"cache_hit", c.cache_hit},
                                                          {"deadline", c.deadline}};
  for (const auto& [label, value] : series) {
    out += "gpuadmit_dra_lookups_total{result=\"";
    out += label;
    out += "\"} " + std::to_string(value) + "\n";
  }
}

}  // namespace gpuadmit::kube
